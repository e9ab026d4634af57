import { expect } from 'chai';
import { checkSimulatorConfig, createSimulatorProvider, type SimulatorConfig, type SimulatorOptions } from '../../providers/simulator.ts';
import type { DeliveryReport, OutboundMessage, Provider, ProviderLogger } from '../../providers/types.ts';

const FAST: SimulatorOptions = { redeliveryMinMs: 5, redeliveryMaxMs: 20 };

const message: OutboundMessage = {
  messageId: 'msg_sim',
  to: '+447700900123',
  from: 'Dispatch',
  body: 'hello',
  encoding: 'GSM-7',
  segments: 1,
  parts: ['hello'],
};

async function waitFor(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('simulator provider', () => {
  let providers: Provider[];
  let logs: Array<{ level: string; message: string; details: object }>;
  /** Every call of onReport, stored or not. */
  let deliveries: DeliveryReport[];
  let stored: DeliveryReport[];
  let store: (report: DeliveryReport) => Promise<void>;

  const logger: ProviderLogger = {
    info: (details, message) => logs.push({ level: 'info', message, details }),
    warn: (details, message) => logs.push({ level: 'warn', message, details }),
    error: (details, message) => logs.push({ level: 'error', message, details }),
  };

  function simulator(config: Partial<SimulatorConfig> = {}, options: SimulatorOptions = {}): Provider {
    const provider = createSimulatorProvider(
      { outcome: 'delivered', dlr_delay_ms: 0, ...config },
      {
        routeId: 3,
        dlrUrl: 'http://127.0.0.1/unused',
        logger,
        onReport: (report) => {
          deliveries.push(report);
          return store(report);
        },
        onInbound: async () => {},
      },
      { ...FAST, ...options },
    );
    providers.push(provider);
    return provider;
  }

  /**
   * Waits until enough time has passed for `stopped` to have delivered again were it still
   * running: a second simulator with the same backoff, started now, has delivered three times.
   */
  async function outlastRedelivery(stopped: string): Promise<void> {
    await simulator().submit(message);
    await waitFor(() => deliveries.filter((report) => report.providerMessageId !== stopped).length >= 3);
  }

  /** A store that fails `count` times, then stores. */
  function failing(count: number): (report: DeliveryReport) => Promise<void> {
    return (report) => {
      if (count-- > 0) return Promise.reject(new Error('database down'));
      stored.push(report);
      return Promise.resolve();
    };
  }

  beforeEach(() => {
    providers = [];
    logs = [];
    deliveries = [];
    stored = [];
    store = failing(0);
  });

  afterEach(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
  });

  it('accepts and reports delivered', async () => {
    const outcome = await simulator().submit(message);
    if (outcome.status !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
    await waitFor(() => stored.length === 1);
    expect(stored[0]).to.include({ providerMessageId: outcome.providerMessageId, status: 'delivered' });
  });

  it('reports undelivered with an error when so configured', async () => {
    await simulator({ outcome: 'undelivered' }).submit(message);
    await waitFor(() => stored.length === 1);
    expect(stored[0]).to.include({ status: 'undelivered', errorCode: 'UNDELIV' });
  });

  it('answers rejected and unavailable as a hard and a retryable error', async () => {
    expect(await simulator({ outcome: 'rejected' }).submit(message)).to.include({ status: 'rejected', code: 'provider_rejected' });
    expect(await simulator({ outcome: 'unavailable' }).submit(message)).to.include({ status: 'retryable', code: 'provider_unavailable' });
  });

  it('delivers a report that could not be stored again until it is stored, and says so once', async () => {
    store = failing(3);
    const outcome = await simulator().submit(message);
    await waitFor(() => stored.length === 1);

    expect(deliveries).to.have.length(4);
    expect(new Set(deliveries)).to.have.property('size', 1);
    expect(stored[0]).to.include({ providerMessageId: (outcome as { providerMessageId: string }).providerMessageId });
    expect(logs.map(({ level, message }) => `${level} ${message}`)).to.deep.equal(['warn Simulator delivery report not recorded; delivering it again later']);
    expect(logs[0].details).to.include({ routeId: 3, error: 'database down' });
  });

  it('gives a report up, and says so, once redeliveryForMs has passed', async () => {
    store = failing(Infinity);
    await simulator({}, { redeliveryForMs: 60 }).submit(message);
    await waitFor(() => logs.some(({ level }) => level === 'error'));
    const tries = deliveries.length;
    const id = deliveries[0].providerMessageId;

    expect(tries).to.be.at.least(2);
    expect(logs.map(({ level }) => level)).to.deep.equal(['warn', 'error']);
    expect(logs[1].message).to.equal('Simulator delivery report never recorded; given up');
    await outlastRedelivery(id);
    expect(deliveries.filter((report) => report.providerMessageId === id)).to.have.length(tries);
  });

  it('stops delivering again when closed', async () => {
    store = failing(Infinity);
    const provider = simulator();
    await provider.submit(message);
    await waitFor(() => deliveries.length >= 2);

    await provider.close();
    const tries = deliveries.length;
    const id = deliveries[0].providerMessageId;
    await outlastRedelivery(id);

    expect(deliveries.filter((report) => report.providerMessageId === id)).to.have.length(tries);
  });

  it('answers retryable after close', async () => {
    const provider = simulator();
    await provider.close();
    expect(await provider.submit(message)).to.include({ status: 'retryable', code: 'provider_unavailable' });
  });
});

describe('checkSimulatorConfig', () => {
  it('accepts each outcome, with a report delay or without', () => {
    for (const outcome of ['delivered', 'undelivered', 'rejected', 'unavailable']) expect(checkSimulatorConfig({ outcome })).to.equal(null);
    expect(checkSimulatorConfig({ outcome: 'delivered', dlr_delay_ms: 0 })).to.equal(null);
  });

  it('names the field that is wrong', () => {
    expect(checkSimulatorConfig(null)?.param).to.equal('config');
    expect(checkSimulatorConfig({ outcome: 'lost' })?.param).to.equal('config.outcome');
    expect(checkSimulatorConfig({ outcome: 'delivered', dlr_delay_ms: -1 })?.param).to.equal('config.dlr_delay_ms');
    expect(checkSimulatorConfig({ outcome: 'delivered', speed: 1 })?.param).to.equal('config.speed');
  });
});
