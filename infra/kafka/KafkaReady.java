// Readiness probe for the local test broker. infra/kafka.sh compiles it once
// against the broker's own jars and runs it after each broker start:
//   javac -cp ".infra/kafka/libs/*" -d .infra/kafka/probe infra/kafka/KafkaReady.java
//   java -cp ".infra/kafka/probe:.infra/kafka/libs/*" KafkaReady 127.0.0.1:39092 60
// An open port is not enough: it waits until the broker answers a Metadata
// request with a live node and controller, and until the group coordinator
// answers (which also creates __consumer_offsets), so the first consumer group
// in a test does not race broker start-up. Exit 0 when ready, 1 on timeout.
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

public class KafkaReady {
  public static void main(String[] args) throws Exception {
    String bootstrap = args.length > 0 ? args[0] : "127.0.0.1:39092";
    long timeoutMs = (args.length > 1 ? Long.parseLong(args[1]) : 60) * 1000L;
    long start = System.currentTimeMillis();
    long deadline = start + timeoutMs;

    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, "200");
    p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");

    String last = "no answer yet";
    int attempts = 0;
    try (Admin admin = Admin.create(p)) {
      while (System.currentTimeMillis() < deadline) {
        attempts++;
        try {
          DescribeClusterResult c = admin.describeCluster();
          int nodes = c.nodes().get(5, TimeUnit.SECONDS).size();
          var controller = c.controller().get(5, TimeUnit.SECONDS);
          if (nodes > 0 && controller != null && !controller.isEmpty()) {
            long metadataMs = System.currentTimeMillis() - start;
            admin.listTopics().names().get(5, TimeUnit.SECONDS);
            // Needs a working group coordinator. For an unknown group Kafka 4 answers
            // GroupIdNotFound (older brokers: state DEAD); either means it answered.
            try {
              admin.describeConsumerGroups(List.of("__infra_ready_probe")).all().get(15, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
              if (!(e.getCause() instanceof GroupIdNotFoundException)) throw e;
            }
            System.out.println("kafka ready: " + nodes + " node(s), cluster " + c.clusterId().get()
                + "; metadata after " + metadataMs + " ms, group coordinator after "
                + (System.currentTimeMillis() - start) + " ms; attempt " + attempts
                + (attempts > 1 ? " (before: " + last + ")" : ""));
            return;
          }
          last = "metadata without live nodes/controller";
        } catch (Exception e) {
          last = e.getClass().getSimpleName() + ": " + (e.getCause() != null ? e.getCause() : e.getMessage());
        }
        Thread.sleep(300);
      }
    }
    System.err.println("kafka not ready after " + timeoutMs / 1000 + "s: " + last);
    System.exit(1);
  }
}
