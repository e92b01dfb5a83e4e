/**
 * Preloaded with `node --import` into a measured process: at exit, writes the process's
 * resource usage (user + system CPU of all its threads, the judging worker included) to the
 * file named by RJ_CPU_REPORT. Measuring from inside needs no external `time` tool.
 */
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const target = process.env.RJ_CPU_REPORT;
if (isMainThread && target) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(target, JSON.stringify({ user_us: u.userCPUTime, system_us: u.systemCPUTime, max_rss_kb: u.maxRSS }));
  });
}
