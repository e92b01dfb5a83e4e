/**
 * kafkajs 2.2.4 (its last release) re-arms its "send the queued requests" timer after every
 * broker reply, also when nothing is queued and the broker throttles nothing. Its throttle
 * deadline is then the initial -1, so the delay is -1 - Date.now(): Node runs the timer after
 * 1 ms, which re-arms it again. Every open broker connection so wakes its process about a
 * thousand times a second while idle, and Node 24+ prints a TimeoutNegativeWarning for it
 * (upstream tulios/kafkajs#1751, not released). The timer only has work while requests wait in
 * the queue, and queueing one (push) arms it again, so with an empty queue it is not armed.
 */
import RequestQueue from 'kafkajs/src/network/requestQueue/index.js';

const patched = Symbol.for('reasoning-jury.kafkajs-idle-timer');

export function skipIdleRequestQueueTimer(): void {
  const proto = RequestQueue.prototype as RequestQueue & { [patched]?: true };
  const arm = proto.scheduleCheckPendingRequests;
  if (proto[patched] || typeof arm !== 'function') return;
  proto.scheduleCheckPendingRequests = function (this: RequestQueue) {
    // Any other shape (a future kafkajs) keeps its own behaviour.
    if (Array.isArray(this.pending) && this.pending.length === 0) return;
    arm.call(this);
  };
  proto[patched] = true;
}
