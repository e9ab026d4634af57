/** One run of the load process, as the bench asks for it (JSON on the command line). */
export interface LoadJob {
  /** The same operation's URL on each Dispatch process; connections are spread over them. */
  urls: string[];
  method: 'GET' | 'POST';
  /** API keys taken in turn, one per request (one key may make at most 6,000 requests a minute). Empty: no Authorization. */
  keys: string[];
  /** Sends a POST /messages/send body with a different recipient per request. */
  send?: { from: string; reference: string };
  connections: number;
  durationSeconds: number;
  /** Closed loop: stops early once this many requests have been answered. */
  maxRequests?: number;
  /** Open loop: requests start at this steady rate, whatever the pace of the answers. Unset: closed loop. */
  ratePerSecond?: number;
  /** Also gives the percentiles of each window of this length, to compare a run's start with its end. */
  windowSeconds?: number;
  /** Writes the ids of accepted messages there, one a line, for the totals check. */
  idsFile?: string;
}

export interface Latency {
  /** Milliseconds, of the answers with a 2xx status. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  count: number;
}

export interface LoadResult {
  requests: number;
  /** Answers with a 2xx status. */
  ok: number;
  okPerSecond: number;
  statuses: Record<string, number>;
  /** Requests that got no answer (connection errors and timeouts). */
  errors: number;
  /** Why, by error code or message, where the load generator tells. */
  errorReasons?: Record<string, number>;
  /** Requests still in flight when a closed loop stopped at its deadline: sent, maybe accepted, never answered. */
  unanswered: number;
  durationSeconds: number;
  latency: Latency;
  windows?: Latency[];
}
