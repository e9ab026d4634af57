/** At most this many recipients go in one bulk request (SendBulkRequest.recipients). */
export const MAX_RECIPIENTS = 1000;

/**
 * The phone numbers of a pasted or uploaded list: one per line, or a CSV whose first cell that
 * looks like a number is taken (a header line has none). Spaces, dashes and brackets are dropped;
 * the API judges what remains, so a malformed number is refused by name rather than lost here.
 */
export function parseRecipients(text: string): string[] {
  const numbers = text.split(/\r?\n/).flatMap((line) => {
    const cell = line
      .split(/[,;\t]/)
      .map((value) => value.trim().replace(/^"|"$/g, ''))
      .find((value) => /^\+?[0-9][0-9 ()-]{2,}$/.test(value));
    return cell ? [cell.replace(/[ ()-]/g, '')] : [];
  });
  return [...new Set(numbers)];
}
