import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { Pagination } from '../components/Pagination';
import { formatTime } from '../lib/format';
import { useCan } from '../lib/session-context';
import { useListParams } from '../lib/use-page-param';

type SenderType = NonNullable<Schemas['CreateSenderRequest']['type']>;
const TYPES: SenderType[] = ['alphanumeric', 'numeric', 'short_code', 'long_code'];

function RegisterSender() {
  const queryClient = useQueryClient();
  const [senderId, setSenderId] = useState('');
  const [type, setType] = useState<SenderType | ''>('');
  const [country, setCountry] = useState('');
  const register = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/senders/create', {
          body: { sender_id: senderId.trim(), ...(type && { type }), ...(country && { country_code: country.trim().toUpperCase() }) },
        }),
      ),
    onSuccess: () => {
      setSenderId('');
      void queryClient.invalidateQueries({ queryKey: ['senders'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    register.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="register-sender">
      <h2 id="register-sender">Register a sender ID</h2>
      <label>
        Sender ID (up to 16 letters, digits and spaces, or a number)
        <input required maxLength={16} value={senderId} onChange={(event) => setSenderId(event.target.value)} />
      </label>
      <label>
        Type
        <select value={type} onChange={(event) => setType(event.target.value as SenderType | '')}>
          <option value="">Decided from the ID</option>
          {TYPES.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </select>
      </label>
      <label>
        Country (ISO code, optional)
        <input maxLength={2} value={country} onChange={(event) => setCountry(event.target.value)} />
      </label>
      <button type="submit" disabled={register.isPending}>
        Register
      </button>
      <p className="help">An operator approves a sender ID before messages can be sent from it.</p>
      <ErrorNotice error={register.error} />
    </form>
  );
}

export function Senders() {
  const can = useCan();
  const { page, setPage } = useListParams();
  const senders = useQuery({ queryKey: ['senders', page], queryFn: () => unwrap(api.GET('/senders', { params: { query: { page, limit: 25 } } })) });
  return (
    <>
      <h1>Senders</h1>
      {can('senders:write') && <RegisterSender />}
      <ErrorNotice error={senders.error} />
      {senders.data && senders.data.data.length === 0 && (
        <EmptyState>{can('senders:write') ? 'No sender yet — register one above.' : 'No sender yet — a key with senders:write can register one.'}</EmptyState>
      )}
      {senders.data && senders.data.data.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Sender ID</th>
                  <th scope="col">Type</th>
                  <th scope="col">Country</th>
                  <th scope="col">Status</th>
                  <th scope="col">Registered</th>
                </tr>
              </thead>
              <tbody>
                {senders.data.data.map((sender) => (
                  <tr key={sender.id}>
                    <td>{sender.sender_id}</td>
                    <td>{sender.type}</td>
                    <td>{sender.country_code ?? '—'}</td>
                    <td>
                      <span className={`status status-${sender.status}`}>{sender.status}</span>
                      {sender.status === 'pending' && <span className="help"> — waiting for an operator</span>}
                    </td>
                    <td>{formatTime(sender.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={senders.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
