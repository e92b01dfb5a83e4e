/**
 * The registered connectors: one line per connector, each importing the module that registers
 * what it reads or writes under its URL scheme (src/pipeline/connector.ts). An entry module
 * (connectors/<name>.ts) sits beside its connector's folder and loads that folder only when a
 * run opens it, so a local run loads nothing of Kafka or S3. A new connector is its module and
 * one line here (docs/extending.md).
 */
import '../../connectors/file.js';
import '../../connectors/s3.js';
import '../../connectors/kafka.js';
import '../../connectors/file/stdin.js';
