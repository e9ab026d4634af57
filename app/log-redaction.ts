/**
 * The delivery-report URL's last segment is its route's secret, the endpoint's only credential.
 * Everything after the prefix goes, however the path is cased or its slashes doubled or escaped,
 * since Express routes such variants too, or a mistyped one still carries the secret.
 */
const DELIVERY_REPORT_PATH = /(\/callbacks(?:\/|%2f)+dlr)(?:\/|%2f)[^]*$/i;

/** A request path fit for a log line. */
export const redactPath = (path: string): string => path.replace(DELIVERY_REPORT_PATH, '$1/[redacted]');
