/**
 * The delivery-report and inbound URLs' last segment is its route's secret, the endpoint's only credential.
 * Everything after the prefix goes, however the path is cased or its slashes doubled or escaped,
 * since Express routes such variants too, or a mistyped one still carries the secret.
 */
const CALLBACK_PATH = /(\/callbacks(?:\/|%2f)+(?:dlr|inbound))(?:\/|%2f)[^]*$/i;

/** A request path fit for a log line. */
export const redactPath = (path: string): string => path.replace(CALLBACK_PATH, '$1/[redacted]');
