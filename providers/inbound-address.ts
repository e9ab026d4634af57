/**
 * An inbound message's address as Dispatch writes numbers: 9 to 15 digits are an international
 * number and gain their '+' (many SMSCs send them with TON 0, unknown, and HTTP providers often
 * without the '+'), unless the sender says it is national, which no country code can be guessed
 * for; a short code (3 to 8 digits) or an alphanumeric sender is kept as sent, as outbound
 * addresses are written (smpp.ts sourceAddress).
 */
export function inboundAddress(raw: string, national = false): string {
  const value = raw.trim();
  if (!national && /^\+?\d{9,15}$/.test(value)) return `+${value.replace(/^\+/, '')}`;
  return value;
}
