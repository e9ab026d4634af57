/**
 * Polls `check` until it reports done, or throws after `timeoutMs` with its last account of what
 * is still missing. The deadline is generous on purpose: it bounds a hang, it does not time work.
 * A check that only reads what the test holds answers at once, without a promise.
 */
export async function eventually(
  what: string,
  timeoutMs: number,
  check: () => { done: boolean; detail: string } | Promise<{ done: boolean; detail: string }>,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { done, detail } = await check();
    if (done) return;
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${Math.round(timeoutMs / 1000)} s. ${detail}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
