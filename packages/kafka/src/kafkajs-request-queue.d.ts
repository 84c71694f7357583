// The part of kafkajs's internal request queue that request-queue-idle-fix.ts corrects (kafkajs ships no types for it).
declare module 'kafkajs/src/network/requestQueue' {
  export default class RequestQueue {
    constructor(options: { logger: unknown; isConnected?: () => boolean; [option: string]: unknown });
    pending: unknown[];
    throttledUntil: number;
    throttleCheckTimeoutId: NodeJS.Timeout | null;
    scheduleCheckPendingRequests(): void;
    destroy(): void;
  }
}
