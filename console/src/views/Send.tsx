import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatMoney, localToIso } from '../lib/format';
import { MAX_RECIPIENTS, parseRecipients } from '../lib/recipients';
import { useCan } from '../lib/session-context';
import { useDebounced } from '../lib/use-debounced';

type PreviewRequest = Schemas['MessagePreviewRequest'];
type RecipientPreview = Schemas['RecipientPreview'];

const PREVIEW_DELAY_MS = 400;

interface Draft {
  mode: 'one' | 'list';
  to: string;
  list: string;
  from: string;
  body: string;
  sendAt: string;
  windowStart: string;
  windowEnd: string;
  timeZone: string;
  validity: string;
  smartEncoding: boolean;
}

const EMPTY: Draft = {
  mode: 'one',
  to: '',
  list: '',
  from: '',
  body: '',
  sendAt: '',
  windowStart: '',
  windowEnd: '',
  timeZone: '',
  validity: '',
  smartEncoding: false,
};

/** The fields a send and its preview share, from the form; what is left empty is left out. */
function sharedFields(draft: Draft): Omit<PreviewRequest, 'to' | 'recipients'> {
  return {
    from: draft.from.trim(),
    body: draft.body,
    ...(draft.sendAt && { send_at: localToIso(draft.sendAt) }),
    ...(draft.validity && { validity_period: Number(draft.validity) }),
    ...(draft.windowStart &&
      draft.windowEnd && { send_window: { start: draft.windowStart, end: draft.windowEnd, ...(draft.timeZone && { time_zone: draft.timeZone }) } }),
    smart_encoding: draft.smartEncoding,
  };
}

/** The body with the characters that force UCS-2 marked, at their positions in code points. */
function HighlightedBody({ preview }: { preview: RecipientPreview }) {
  const positions = new Set(preview.ucs2_characters.map((character) => character.position));
  return (
    <p className="body-text preview-body" data-testid="preview-body">
      {[...preview.body].map((character, position) =>
        positions.has(position) ? (
          <mark key={position} title="Forces UCS-2">
            {character}
          </mark>
        ) : (
          character
        ),
      )}
    </p>
  );
}

function Preview({ preview, smart, onUseSmart }: { preview: Schemas['MessagePreview']; smart: RecipientPreview | undefined; onUseSmart: () => void }) {
  const first = preview.recipients[0];
  const refused = preview.recipients.filter((recipient) => recipient.refusal);
  return (
    <section className="preview" aria-labelledby="preview-title" aria-live="polite">
      <h2 id="preview-title">Preview</h2>
      {first && first.encoding && (
        <>
          <p data-testid="preview-summary">
            {first.encoding} · {first.segments} segment{first.segments === 1 ? '' : 's'} · {formatMoney(preview.cost, preview.currency)} for {preview.sendable}{' '}
            of {preview.total} recipient{preview.total === 1 ? '' : 's'}
          </p>
          <HighlightedBody preview={first} />
          {first.ucs2_characters.length > 0 && (
            <p className="help">
              Marked characters are outside GSM-7 and make the message UCS-2 ({first.ucs2_characters.map((character) => character.character).join(' ')}).
            </p>
          )}
        </>
      )}
      {smart && first && smart.body !== first.body && (
        <div className="notice">
          <p>
            Smart encoding would send it as {smart.encoding} in {smart.segments} segment{smart.segments === 1 ? '' : 's'}:
          </p>
          <p className="body-text">{smart.body}</p>
          <button type="button" onClick={onUseSmart}>
            Use smart encoding
          </button>
        </div>
      )}
      {refused.length > 0 && (
        <div className="notice notice-error">
          <p>
            {refused.length} of {preview.total} would be refused:
          </p>
          <ul>
            {refused.slice(0, 10).map((recipient) => (
              <li key={recipient.to}>
                {recipient.to}: {recipient.refusal?.error.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

export function Send() {
  const can = useCan();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const set = <Field extends keyof Draft>(field: Field, value: Draft[Field]) => setDraft((current) => ({ ...current, [field]: value }));
  const recipients = useMemo(
    () => (draft.mode === 'one' ? [draft.to.trim()].filter(Boolean) : parseRecipients(draft.list)),
    [draft.mode, draft.to, draft.list],
  );
  const tooMany = recipients.length > MAX_RECIPIENTS;

  const request = useMemo((): PreviewRequest | null => {
    if (!draft.from.trim() || !draft.body || recipients.length === 0 || tooMany) return null;
    return { ...sharedFields(draft), ...(draft.mode === 'one' ? { to: recipients[0] } : { recipients }) };
  }, [draft, recipients, tooMany]);
  const settled = useDebounced(request, PREVIEW_DELAY_MS);
  const preview = useQuery({
    queryKey: ['preview', settled],
    queryFn: async () => {
      const body = settled!;
      // Without smart encoding asked for, a second preview tells what it would change.
      const [plain, smart] = await Promise.all([
        unwrap(api.POST('/messages/preview', { body })),
        body.smart_encoding
          ? undefined
          : unwrap(api.POST('/messages/preview', { body: { ...body, recipients: undefined, to: recipients[0], smart_encoding: true } })),
      ]);
      return { plain: plain.data, smart: smart?.data.recipients[0] };
    },
    enabled: settled !== null,
    placeholderData: (previous) => previous,
  });

  const [idempotencyKey, setIdempotencyKey] = useState(() => crypto.randomUUID());
  const send = useMutation({
    mutationFn: async () => {
      const headers = { 'Idempotency-Key': idempotencyKey };
      if (draft.mode === 'one') {
        const sent = await unwrap(api.POST('/messages/send', { body: { ...sharedFields(draft), to: recipients[0] }, params: { header: headers } }));
        return [sent.data];
      }
      const bulk = await unwrap(api.POST('/messages/bulk', { body: { ...sharedFields(draft), recipients }, params: { header: headers } }));
      return bulk.data.messages;
    },
    onSuccess: () => setIdempotencyKey(crypto.randomUUID()),
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    send.mutate();
  }

  async function upload(file: File | undefined) {
    if (file) set('list', await file.text());
  }

  if (!can('sms:send')) return <p>This key cannot send messages (it lacks the sms:send scope).</p>;
  return (
    <>
      <h1>Send</h1>
      <form className="send-form" onSubmit={submit}>
        <fieldset>
          <legend>Recipients</legend>
          <label className="inline">
            <input type="radio" name="mode" checked={draft.mode === 'one'} onChange={() => set('mode', 'one')} /> One recipient
          </label>
          <label className="inline">
            <input type="radio" name="mode" checked={draft.mode === 'list'} onChange={() => set('mode', 'list')} disabled={!can('sms:bulk')} /> A list (CSV)
          </label>
          {draft.mode === 'one' ? (
            <label>
              To
              <input type="tel" required placeholder="+447400123456" value={draft.to} onChange={(event) => set('to', event.target.value)} />
            </label>
          ) : (
            <>
              <label>
                Numbers, one per line or a CSV
                <textarea rows={5} value={draft.list} onChange={(event) => set('list', event.target.value)} />
              </label>
              <label>
                Or upload a CSV file
                <input type="file" accept=".csv,text/csv,text/plain" onChange={(event) => void upload(event.target.files?.[0])} />
              </label>
              <p className="help" aria-live="polite">
                {recipients.length} recipient{recipients.length === 1 ? '' : 's'}
                {tooMany && ` — at most ${MAX_RECIPIENTS} in one send`}
              </p>
            </>
          )}
        </fieldset>
        <label>
          From (an approved sender ID)
          <input required maxLength={16} value={draft.from} onChange={(event) => set('from', event.target.value)} />
        </label>
        <label>
          Message
          <textarea required rows={4} maxLength={1600} value={draft.body} onChange={(event) => set('body', event.target.value)} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={draft.smartEncoding} onChange={(event) => set('smartEncoding', event.target.checked)} /> Smart encoding (replace
          look-alike characters to stay in GSM-7)
        </label>
        <details>
          <summary>Scheduling and validity</summary>
          <label>
            Send at
            <input type="datetime-local" value={draft.sendAt} onChange={(event) => set('sendAt', event.target.value)} />
          </label>
          <fieldset>
            <legend>Send window (recipient's local time)</legend>
            <label>
              From
              <input type="time" value={draft.windowStart} onChange={(event) => set('windowStart', event.target.value)} />
            </label>
            <label>
              Until
              <input type="time" value={draft.windowEnd} onChange={(event) => set('windowEnd', event.target.value)} />
            </label>
            <label>
              Time zone (optional, IANA)
              <input placeholder="Europe/London" value={draft.timeZone} onChange={(event) => set('timeZone', event.target.value)} />
            </label>
          </fieldset>
          <label>
            Validity period (seconds, 5 to 86400)
            <input type="number" min={5} max={86400} value={draft.validity} onChange={(event) => set('validity', event.target.value)} />
          </label>
        </details>
        <button type="submit" disabled={send.isPending || recipients.length === 0 || tooMany}>
          {draft.sendAt ? 'Schedule' : 'Send'}
          {recipients.length > 1 ? ` to ${recipients.length} recipients` : ''}
        </button>
      </form>
      <ErrorNotice error={preview.error} />
      {preview.data && <Preview preview={preview.data.plain} smart={preview.data.smart} onUseSmart={() => set('smartEncoding', true)} />}
      <ErrorNotice error={send.error} />
      {send.data && (
        <div className="notice" role="status">
          <p>
            {send.data.length === 1 ? 'Message accepted: ' : `${send.data.length} messages accepted: `}
            {send.data.slice(0, 5).map((message) => (
              <Link key={message.id} to={`/messages/${message.id}`}>
                {message.id} ({message.status}){' '}
              </Link>
            ))}
          </p>
        </div>
      )}
    </>
  );
}
