// kafkajs ships no types for its request queue; idle-timer.ts needs only these two members.
declare module 'kafkajs/src/network/requestQueue/index.js' {
  export default class RequestQueue {
    pending: unknown[];
    scheduleCheckPendingRequests(): void;
  }
}
