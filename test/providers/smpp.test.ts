import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { planSegments } from '../../domain/encoding.ts';
import { decodeGsm7 } from '../../providers/gsm7-bytes.ts';
import { checkSmppConfig, concatUdh, createSmppProvider, describeStatus, type SmppConfig, type SmppOptions } from '../../providers/smpp.ts';
import { parseReceiptDate, parseReceiptText, receiptToReport } from '../../providers/smpp-receipt.ts';
import type { DeliveryReport, InboundDelivery, OutboundMessage, Provider, ProviderLogger } from '../../providers/types.ts';
import { FakeSmsc } from '../support/fake-smsc.ts';

const FAST: SmppOptions = { enquireLinkMs: 1_000, responseTimeoutMs: 1_000, rebindMinMs: 20, rebindMaxMs: 200 };

function message(body: string, overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  const plan = planSegments(body);
  return {
    messageId: 'msg_test',
    to: '+447700900123',
    from: '+447700900001',
    body,
    encoding: plan.encoding,
    segments: plan.segments,
    parts: plan.parts,
    ...overrides,
  };
}

describe('SMPP provider', () => {
  let smsc: FakeSmsc;
  let reports: DeliveryReport[];
  let inbound: InboundDelivery[];
  let onReport: (report: DeliveryReport) => Promise<void>;
  let providers: Provider[];
  let logs: Array<{ level: string; message: string; details: object }>;
  const logger: ProviderLogger = {
    info: (details, message) => logs.push({ level: 'info', message, details }),
    warn: (details, message) => logs.push({ level: 'warn', message, details }),
    error: (details, message) => logs.push({ level: 'error', message, details }),
  };

  function connect(config: Partial<SmppConfig> = {}, options: SmppOptions = {}): Provider {
    const provider = createSmppProvider(
      { host: '127.0.0.1', port: smsc.port, system_id: FakeSmsc.SYSTEM_ID, password: FakeSmsc.PASSWORD, ...config },
      {
        routeId: 1,
        dlrUrl: 'http://127.0.0.1/unused',
        onReport: (report) => onReport(report),
        onInbound: (delivery) => {
          inbound.push(delivery);
          return Promise.resolve();
        },
        logger,
      },
      { ...FAST, ...options },
    );
    providers.push(provider);
    return provider;
  }

  beforeEach(async () => {
    smsc = await FakeSmsc.start();
    reports = [];
    inbound = [];
    onReport = (report) => {
      reports.push(report);
      return Promise.resolve();
    };
    providers = [];
    logs = [];
  });

  afterEach(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
    await smsc.stop();
  });

  describe('submitting', () => {
    it('binds as transceiver and sends a short GSM-7 message as unpacked bytes with data_coding 0', async () => {
      const outcome = await connect().submit(message('Hi @£ Δ'));

      expect(smsc.binds).to.equal(1);
      expect(smsc.submits).to.have.length(1);
      const submit = smsc.submits[0];
      expect(outcome).to.deep.equal({ status: 'accepted', providerMessageId: submit.messageId });
      expect(submit.messageId).to.not.equal('');
      expect(submit).to.include({
        systemId: FakeSmsc.SYSTEM_ID,
        sourceAddr: '447700900001',
        sourceAddrTon: 1,
        sourceAddrNpi: 1,
        destinationAddr: '447700900123',
        destAddrTon: 1,
        destAddrNpi: 1,
        dataCoding: 0,
        esmClass: 0,
        registeredDelivery: 1,
        text: 'Hi @£ Δ',
      });
      expect(submit.udh).to.equal(undefined);
      expect(submit.shortMessage.toString('hex')).to.equal('48692000012010');
    });

    it("carries the message's validity in submit_sm's validity_period, in the relative format, and none without one", async () => {
      const before = Date.now();
      await connect().submit(message('Code 1234', { validitySeconds: 93_784 }));
      const after = Date.now();
      await connect().submit(message('No validity'));
      // The package reads a relative period as the instant it ends from its arrival: 1 day, 2 h, 3 min and 4 s on.
      const ends = smsc.submits[0].validityPeriod!.getTime() - 93_784_000;
      expect(ends).to.be.within(before - 1000, after + 1000);
      expect(smsc.submits[1].validityPeriod).to.equal(null);
    });

    it('binds as transceiver for SMPP 3.4 with the configured system_type', async () => {
      connect({ system_type: 'VMA' });
      await smsc.waitFor(() => smsc.binds === 1);

      expect(smsc.lastBind).to.deep.equal({ command: 'bind_transceiver', systemId: FakeSmsc.SYSTEM_ID, systemType: 'VMA', interfaceVersion: 0x34 });
    });

    it('gives an alphanumeric sender TON 5 NPI 0 and a short code TON 3 NPI 0', async () => {
      const provider = connect();
      await provider.submit(message('one', { from: 'Dispatch' }));
      await provider.submit(message('two', { from: '12345' }));

      expect(smsc.submits[0]).to.include({ sourceAddr: 'Dispatch', sourceAddrTon: 5, sourceAddrNpi: 0 });
      expect(smsc.submits[1]).to.include({ sourceAddr: '12345', sourceAddrTon: 3, sourceAddrNpi: 0 });
    });

    it('encodes extension characters as an escape byte 0x1B and their code', async () => {
      await connect().submit(message('a€[]{}\\|~^'));

      const submit = smsc.submits[0];
      expect(submit.shortMessage.toString('hex')).to.equal('611b651b3c1b3e1b281b291b2f1b401b3d1b14');
      expect(submit.text).to.equal('a€[]{}\\|~^');
    });

    it('sends a long GSM-7 message as three concatenated parts sharing one UDH reference', async () => {
      const body = 'The quick brown fox jumps over the lazy dog. '.repeat(9);
      const sent = message(body);
      expect(sent.parts).to.have.length(3);

      const outcome = await connect().submit(sent);

      expect(smsc.submits).to.have.length(3);
      const reference = smsc.submits[0].udh![3];
      smsc.submits.forEach((submit, i) => {
        expect(submit.esmClass).to.equal(0x40);
        expect(submit.dataCoding).to.equal(0);
        expect([...submit.udh!]).to.deep.equal([0x05, 0x00, 0x03, reference, 3, i + 1]);
      });
      expect(smsc.submits.map((submit) => decodeGsm7(submit.shortMessage)).join('')).to.equal(body);
      expect(smsc.submits.map((submit) => submit.text).join('')).to.equal(body);
      expect(outcome).to.deep.equal({
        status: 'accepted',
        providerMessageId: smsc.submits[0].messageId,
        partIds: smsc.submits.map((submit) => submit.messageId),
      });
      expect(new Set(smsc.submits.map((submit) => submit.messageId)).size).to.equal(3);
    });

    it('uses a new UDH reference for each concatenated message', async () => {
      const provider = connect();
      await provider.submit(message('x'.repeat(200)));
      await provider.submit(message('y'.repeat(200)));

      expect(smsc.submits).to.have.length(4);
      expect(smsc.submits[2].udh![3]).to.equal((smsc.submits[0].udh![3] + 1) & 0xff);
    });

    it('sends UCS-2 as UTF-16BE with data_coding 8, an emoji as its surrogate pair', async () => {
      const outcome = await connect().submit(message('Ж😀'));

      const submit = smsc.submits[0];
      expect(outcome.status).to.equal('accepted');
      expect(submit.dataCoding).to.equal(8);
      expect(submit.shortMessage.toString('hex')).to.equal('0416d83dde00');
      expect(submit.text).to.equal('Ж😀');
    });

    it('sends a long UCS-2 message in parts that re-join', async () => {
      const body = 'Привет, мир! 😀 '.repeat(6);
      await connect().submit(message(body));

      expect(smsc.submits).to.have.length(2);
      expect(smsc.submits.map((submit) => submit.dataCoding)).to.deep.equal([8, 8]);
      expect(smsc.submits.map((submit) => submit.shortMessage.swap16().toString('utf16le')).join('')).to.equal(body);
    });

    for (const [name, status] of [
      ['ESME_RTHROTTLED', 0x58],
      ['ESME_RSYSERR', 0x08],
      ['ESME_RMSGQFUL', 0x14],
    ] as const) {
      it(`treats ${name} as retryable`, async () => {
        smsc.respondWith(status);
        const outcome = await connect().submit(message('hello'));
        expect(outcome).to.deep.equal({ status: 'retryable', code: 'provider_unavailable', message: `SMPP ${describeStatus(status)}` });
      });
    }

    it('treats ESME_RINVDSTADR as a hard rejection', async () => {
      smsc.respondWith(0x0b);
      const outcome = await connect().submit(message('hello'));
      expect(outcome).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: 'SMPP ESME_RINVDSTADR (0x0B)' });
    });

    it('reports the failure of a later part and sends no further parts', async () => {
      smsc.respondWith((submit) => (submit.udh?.[5] === 2 ? 0x0b : 0));
      const outcome = await connect().submit(message('z'.repeat(400)));

      expect(outcome).to.include({ status: 'rejected', code: 'provider_rejected' });
      expect(smsc.submits).to.have.length(2);
    });

    it('is unknown when a submit_sm_resp never comes, since the SMSC may have taken it', async () => {
      smsc.respondWith(null);
      const provider = connect({}, { responseTimeoutMs: 300 });
      await smsc.waitFor(() => smsc.binds === 1);

      const outcome = await provider.submit(message('hello'));

      expect(outcome).to.deep.equal({
        status: 'unknown',
        code: 'provider_timeout',
        message: 'SMPP no submit_sm_resp within 300 ms; the SMSC may have sent it',
      });
      expect(smsc.submits).to.have.length(1);
    });

    it('is unknown when the link drops after submit_sm was written, and rebinds', async () => {
      smsc.respondWith('drop');
      const provider = connect();

      const outcome = await provider.submit(message('hello'));

      expect(outcome).to.deep.equal({
        status: 'unknown',
        code: 'provider_timeout',
        message: 'SMPP connection lost after submit_sm was written, before its response; the SMSC may have sent it',
      });
      expect(smsc.submits).to.have.length(1);
      smsc.respondWith(0);
      expect((await provider.submit(message('after'))).status).to.equal('accepted');
      expect(smsc.binds).to.equal(2);
    });

    it('is unknown, naming the part, when a later part of a concatenated message goes unanswered', async () => {
      smsc.respondWith((submit) => (submit.udh?.[5] === 2 ? null : 0));
      const outcome = await connect({}, { responseTimeoutMs: 300 }).submit(message('z'.repeat(400)));

      expect(outcome).to.deep.equal({
        status: 'unknown',
        code: 'provider_timeout',
        message: 'part 2 of 3: SMPP no submit_sm_resp within 300 ms; the SMSC may have sent it',
      });
      expect(smsc.submits).to.have.length(2);
    });

    it('is rejected, not retryable, when a later part is throttled, since another route would send the first part again', async () => {
      smsc.respondWith((submit) => (submit.udh?.[5] === 2 ? 0x58 : 0));
      const outcome = await connect().submit(message('z'.repeat(400)));

      expect(outcome).to.include({ status: 'rejected', code: 'provider_rejected' });
      expect(outcome)
        .to.have.property('message')
        .that.matches(/^part 2 of 3: SMPP ESME_RTHROTTLED \(0x58\); /);
    });

    it('is retryable when the first part is throttled', async () => {
      smsc.respondWith(0x58);
      const outcome = await connect().submit(message('z'.repeat(400)));

      expect(outcome).to.deep.equal({ status: 'retryable', code: 'provider_unavailable', message: 'part 1 of 3: SMPP ESME_RTHROTTLED (0x58)' });
    });

    it('answers retryable when the password is wrong, and keeps trying to bind without crashing', async () => {
      const provider = connect({ password: 'wrong' }, { responseTimeoutMs: 300 });

      const outcome = await provider.submit(message('hello'));

      expect(outcome).to.include({ status: 'retryable', code: 'provider_unavailable' });
      expect(outcome).to.have.property('message').that.contains('ESME_RINVPASWD (0x0E)');
      await smsc.waitFor(() => smsc.refusedBinds >= 3);
      expect(smsc.binds).to.equal(0);
      expect(smsc.submits).to.have.length(0);
    });

    it('answers retryable when nothing listens on the port', async () => {
      const probe = createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => probe.once('listening', resolve));
      const port = (probe.address() as { port: number }).port;
      await new Promise((resolve) => probe.close(resolve));

      const outcome = await connect({ port }, { responseTimeoutMs: 200 }).submit(message('hello'));

      expect(outcome).to.include({ status: 'retryable', code: 'provider_unavailable' });
    });
  });

  describe('keeping the bind', () => {
    it('rebinds after the SMSC drops the connection, and a submit made meanwhile waits for it', async () => {
      const provider = connect({}, { rebindMinMs: 300 });
      expect((await provider.submit(message('before'))).status).to.equal('accepted');

      smsc.dropConnections();
      // The provider waits 300 ms after seeing the drop before it rebinds.
      await smsc.waitFor(() => logs.some(({ message }) => message === 'SMPP link dropped, rebinding'));
      expect(smsc.binds).to.equal(1);
      const outcome = await provider.submit(message('after'));

      expect(outcome.status).to.equal('accepted');
      expect(smsc.binds).to.equal(2);
      expect(smsc.submits.map((submit) => submit.text)).to.deep.equal(['before', 'after']);
    });

    it('logs the bind, the drop, the rebind and the unbind at close, with the route and without the password', async () => {
      const provider = connect();
      const logged = (message: string) => logs.some((entry) => entry.message === message);
      // The ESME logs a bind when its bind_resp arrives, after the SMSC has counted the bind.
      await smsc.waitFor(() => logged('SMPP bound as transceiver'));
      smsc.dropConnections();
      await smsc.waitFor(() => logged('SMPP rebound as transceiver'));
      await provider.close();

      expect(logs.map(({ level, message }) => `${level} ${message}`)).to.deep.equal([
        'info SMPP bound as transceiver',
        'warn SMPP link dropped, rebinding',
        'info SMPP rebound as transceiver',
        'info SMPP unbound',
      ]);
      for (const { details } of logs) expect(details).to.include({ routeId: 1, host: '127.0.0.1', port: smsc.port });
      expect(JSON.stringify(logs)).not.to.contain(FakeSmsc.PASSWORD);
    });

    it('logs a run of refused binds once, with the reason', async () => {
      connect({ password: 'wrong' });
      await smsc.waitFor(() => smsc.refusedBinds >= 3);

      expect(logs.map(({ message }) => message)).to.deep.equal(['SMPP cannot bind, retrying with backoff']);
      expect(logs[0].details).to.include({ error: 'bind refused: ESME_RINVPASWD (0x0E)' });
    });

    it('rebinds after the SMSC unbinds', async () => {
      const provider = connect();
      await smsc.waitFor(() => smsc.binds === 1);

      expect(await smsc.unbind()).to.equal(0);
      await smsc.waitFor(() => smsc.binds === 2);

      expect((await provider.submit(message('after unbind'))).status).to.equal('accepted');
    });

    it('sends enquire_link on its interval', async () => {
      connect({}, { enquireLinkMs: 50 });
      await smsc.waitFor(() => smsc.enquireLinks >= 3);
    });

    it('answers the SMSC enquire_link', async () => {
      connect();
      await smsc.waitFor(() => smsc.binds === 1);
      expect(await smsc.enquireLink()).to.equal(0);
    });

    it('reconnects when the SMSC stops answering enquire_link', async () => {
      connect({}, { enquireLinkMs: 50, responseTimeoutMs: 200 });
      await smsc.waitFor(() => smsc.binds === 1);
      smsc.answerEnquireLinks = false;
      await smsc.waitFor(() => smsc.binds === 2);
    });
  });

  describe('delivery receipts', () => {
    async function submitted(provider = connect()): Promise<string> {
      const outcome = await provider.submit(message('hello'));
      if (outcome.status !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
      return outcome.providerMessageId;
    }

    it('reports DELIVRD as delivered at the done date', async () => {
      const id = await submitted();

      expect(await smsc.sendReceipt(id, 'DELIVRD', '000', { doneDate: '2401311415' })).to.equal(0);

      expect(reports).to.deep.equal([{ providerMessageId: id, status: 'delivered', at: new Date('2024-01-31T14:15:00Z') }]);
    });

    for (const stat of ['UNDELIV', 'EXPIRED', 'REJECTD', 'DELETED', 'UNKNOWN']) {
      it(`reports ${stat} as undelivered, keeping stat and err`, async () => {
        const id = await submitted();

        expect(await smsc.sendReceipt(id, stat, '042', { doneDate: '2401311415' })).to.equal(0);

        expect(reports).to.deep.equal([
          {
            providerMessageId: id,
            status: 'undelivered',
            errorCode: stat,
            errorMessage: `stat:${stat} err:042`,
            ...(stat === 'EXPIRED' && { expired: true }),
            at: new Date('2024-01-31T14:15:00Z'),
          },
        ]);
      });
    }

    it('sends no report for ACCEPTD and ENROUTE, and still answers them', async () => {
      const id = await submitted();

      expect(await smsc.sendReceipt(id, 'ACCEPTD')).to.equal(0);
      expect(await smsc.sendReceipt(id, 'ENROUTE')).to.equal(0);

      expect(reports).to.deep.equal([]);
    });

    it('prefers the receipted_message_id and message_state TLVs to the text', async () => {
      connect();
      await smsc.waitFor(() => smsc.binds === 1);

      await smsc.sendReceiptText('id:1234567 sub:001 dlvrd:001 submit date:2401311400 done date:2401311415 stat:DELIVRD err:000 text:hello', {
        receipted_message_id: '12d687',
        message_state: 5,
      });

      expect(reports).to.have.length(1);
      expect(reports[0]).to.include({ providerMessageId: '12d687', status: 'undelivered', errorCode: 'UNDELIV' });
    });

    it('reads an ASCII receipt under data_coding 0 byte for byte, underscores included', async () => {
      connect();
      await smsc.waitFor(() => smsc.binds === 1);

      await smsc.sendReceipt('a_b$c@1', 'DELIVRD');

      expect(reports.map((report) => report.providerMessageId)).to.deep.equal(['a_b$c@1']);
    });

    it('answers ESME_RX_T_APPN when the report cannot be recorded, so that the SMSC retries, and stays bound', async () => {
      const provider = connect();
      const id = await submitted(provider);
      onReport = () => Promise.reject(new Error('database down'));

      expect(await smsc.sendReceipt(id, 'DELIVRD')).to.equal(0x64);

      expect((await provider.submit(message('still bound'))).status).to.equal('accepted');
      expect(smsc.binds).to.equal(1);
      expect(logs.filter(({ level }) => level === 'warn').map(({ message, details }) => [message, details])).to.deep.equal([
        ['SMPP delivery report not recorded; asking the SMSC to deliver it again', { routeId: 1, host: '127.0.0.1', port: smsc.port, error: 'database down' }],
      ]);
    });

    it('answers a receipt only once its report is stored', async () => {
      const id = await submitted();
      const events: string[] = [];
      let release = () => {};
      const storing = new Promise<void>((resolve) => (release = resolve));
      let reached = false;
      onReport = async (report) => {
        reached = true;
        await storing;
        reports.push(report);
        events.push('stored');
      };

      const answered = smsc.sendReceipt(id, 'DELIVRD').then((status) => events.push(`answered ${status}`));
      await smsc.waitFor(() => reached);
      // A PDU answered on the same session after the receipt: had the receipt been answered
      // before its report was stored, that answer would have come first.
      await smsc.enquireLink();
      expect(events).to.deep.equal([]);
      release();
      await answered;

      expect(events).to.deep.equal(['stored', 'answered 0']);
    });

    it('loses no receipt while reports cannot be stored: the SMSC redelivers it until it is answered 0', async () => {
      const id = await submitted();
      smsc.redeliverAfterMs = 20;
      let failures = 2;
      onReport = (report) => {
        if (failures-- > 0) return Promise.reject(new Error('database down'));
        reports.push(report);
        return Promise.resolve();
      };

      expect(await smsc.sendReceipt(id, 'DELIVRD')).to.equal(0x64);
      await smsc.waitFor(() => smsc.receipts[0].statuses.length === 3);

      expect(smsc.receipts[0].statuses).to.deep.equal([0x64, 0x64, 0]);
      expect(reports.map((report) => [report.providerMessageId, report.status])).to.deep.equal([[id, 'delivered']]);
    });

    it('matches receipts for every part of a concatenated message by the part ids it returned', async () => {
      const outcome = await connect().submit(message('z'.repeat(400)));
      if (outcome.status !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);

      for (const partId of outcome.partIds!) await smsc.sendReceipt(partId, 'DELIVRD');

      expect(reports.map((report) => report.providerMessageId)).to.deep.equal(outcome.partIds);
      expect(outcome.partIds![0]).to.equal(outcome.providerMessageId);
    });

    it('hands a deliver_sm that is not a receipt to onInbound, never to onReport', async () => {
      connect();
      await smsc.waitFor(() => smsc.binds === 1);

      expect(await smsc.sendReceiptText('id:1 stat:DELIVRD', { esm_class: 0, source_addr: '447911123456', destination_addr: '60777' })).to.equal(0);

      expect(reports).to.deep.equal([]);
      expect(inbound).to.deep.equal([{ from: '+447911123456', to: '60777', body: 'id:1 stat:DELIVRD', encoding: 'GSM-7' }]);
    });

    it('refuses for good (ESME_RX_P_APPN), and logs, a deliver_sm that is neither a receipt nor a readable message', async () => {
      connect({}, {});
      await smsc.waitFor(() => smsc.binds === 1);

      expect(await smsc.sendReceiptText('no sender', { esm_class: 0 })).to.equal(0x65);

      expect(inbound).to.deep.equal([]);
      expect(logs.filter((line) => line.level === 'warn').map((line) => line.message)).to.deep.equal([
        'SMPP inbound message dropped: it cannot be read; refused for good (ESME_RX_P_APPN)',
      ]);
    });

    it('answers ESME_RX_T_APPN to an inbound message that could not be stored', async () => {
      const provider = createSmppProvider(
        { host: '127.0.0.1', port: smsc.port, system_id: FakeSmsc.SYSTEM_ID, password: FakeSmsc.PASSWORD },
        {
          routeId: 1,
          dlrUrl: 'http://127.0.0.1/unused',
          onReport: async () => {},
          onInbound: async () => Promise.reject(new Error('database unavailable')),
          logger,
        },
        FAST,
      );
      providers.push(provider);
      await smsc.waitFor(() => smsc.binds === 1);

      expect(await smsc.sendReceiptText('Hello', { esm_class: 0, source_addr: '447911123456' })).to.equal(0x64);
      expect(logs.some((line) => line.level === 'warn' && line.message === 'SMPP inbound message not recorded; asking the SMSC to deliver it again')).to.equal(
        true,
      );
    });
  });

  describe('closing', () => {
    /** The provider in a process of its own, which must exit by itself once the provider is closed. */
    function isolated(password: string, mode: 'submit' | 'refused') {
      const child = spawn(process.execPath, [fileURLToPath(new URL('./programs/smpp-close.ts', import.meta.url)), String(smsc.port), password, mode], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return { child, exited, output: () => output };
    }

    it('unbinds politely and leaves no timers or sockets behind', async () => {
      const run = isolated(FakeSmsc.PASSWORD, 'submit');
      expect(await run.exited).to.equal(0);
      expect(run.output()).to.equal('accepted\n');
      await smsc.waitFor(() => smsc.sessions === 0);
      expect(smsc.unbinds).to.equal(1);
    });

    it('stops retrying a refused bind when closed, leaving nothing behind', async () => {
      const run = isolated('wrong', 'refused');
      await smsc.waitFor(() => smsc.refusedBinds >= 2);
      run.child.stdin.write('close\n');
      // The process ending by itself is the proof: a rebind timer still armed would keep it alive.
      expect(await run.exited).to.equal(0);
      const refused = smsc.refusedBinds;
      await smsc.waitFor(() => smsc.sessions === 0);
      expect(smsc.refusedBinds).to.equal(refused);
    });

    it('answers retryable to a submit after close', async () => {
      const provider = connect();
      await provider.close();

      expect(await provider.submit(message('late'))).to.include({ status: 'retryable', code: 'provider_unavailable' });
    });
  });
});

describe('SMPP receipt text', () => {
  it('reads the SMPP 3.4 Appendix B format', () => {
    expect(
      parseReceiptText('id:0123456789 sub:001 dlvrd:001 submit date:2401311400 done date:2401311415 stat:DELIVRD err:000 text:Hello id:999'),
    ).to.deep.equal({
      id: '0123456789',
      sub: '001',
      dlvrd: '001',
      submitDate: '2401311400',
      doneDate: '2401311415',
      stat: 'DELIVRD',
      err: '000',
      text: 'Hello id:999',
    });
  });

  it('reads keys in any case, with underscores, in another order and with fields missing', () => {
    expect(parseReceiptText('ID:7F3A Stat:undeliv Err:001 Submit_Date:2401311400 Done_Date:240131141530 Text:x')).to.deep.equal({
      id: '7F3A',
      stat: 'undeliv',
      err: '001',
      submitDate: '2401311400',
      doneDate: '240131141530',
      text: 'x',
    });
    expect(parseReceiptText('id:42 stat:EXPIRED')).to.deep.equal({ id: '42', stat: 'EXPIRED' });
  });

  it('tolerates spaces after the colons and finds nothing in unrelated text', () => {
    expect(parseReceiptText('id: 42  stat: DELIVRD')).to.deep.equal({ id: '42', stat: 'DELIVRD' });
    expect(parseReceiptText('Your code is 1234')).to.deep.equal({});
  });

  it('reads done dates with and without seconds as UTC, and refuses impossible ones', () => {
    expect(parseReceiptDate('2401311415')).to.deep.equal(new Date('2024-01-31T14:15:00Z'));
    expect(parseReceiptDate('240131141530')).to.deep.equal(new Date('2024-01-31T14:15:30Z'));
    expect(parseReceiptDate('2402301415')).to.equal(undefined);
    expect(parseReceiptDate('24013114')).to.equal(undefined);
    expect(parseReceiptDate(undefined)).to.equal(undefined);
  });

  it('turns receipts of several SMSC styles into reports', () => {
    expect(receiptToReport({ text: 'id:abc sub:001 dlvrd:001 submit date:2401311400 done date:2401311415 stat:DELIVRD err:000 text:' })).to.deep.equal({
      providerMessageId: 'abc',
      status: 'delivered',
      at: new Date('2024-01-31T14:15:00Z'),
    });
    expect(receiptToReport({ text: 'id:abc submit date:2401311400 done date:2401311415 stat:undeliv err:034' })).to.deep.equal({
      providerMessageId: 'abc',
      status: 'undelivered',
      errorCode: 'undeliv',
      errorMessage: 'stat:undeliv err:034',
      at: new Date('2024-01-31T14:15:00Z'),
    });
    expect(receiptToReport({ text: '', receiptedMessageId: 'X1', messageState: 3 })).to.deep.equal({
      providerMessageId: 'X1',
      status: 'undelivered',
      errorCode: 'EXPIRED',
      errorMessage: 'stat:EXPIRED',
      expired: true,
    });
    expect(receiptToReport({ text: 'id:1 stat:REJECTD', receiptedMessageId: "ff01\u0004'" })).to.include({ providerMessageId: 'ff01', errorCode: 'REJECTD' });
  });

  it('gives no report for states that are not final, unknown states, or a receipt without an id', () => {
    expect(receiptToReport({ text: 'id:1 stat:ACCEPTD err:000' })).to.equal(null);
    expect(receiptToReport({ text: 'id:1 stat:ENROUTE err:000' })).to.equal(null);
    expect(receiptToReport({ text: 'id:1 stat:SCHEDULED' })).to.equal(null);
    expect(receiptToReport({ text: 'stat:DELIVRD err:000' })).to.equal(null);
  });
});

describe('SMPP helpers', () => {
  it('builds the 6-byte concatenation UDH', () => {
    expect([...concatUdh(300, 3, 2)]).to.deep.equal([0x05, 0x00, 0x03, 300 & 0xff, 3, 2]);
  });

  it('names command statuses with their code', () => {
    expect(describeStatus(0x58)).to.equal('ESME_RTHROTTLED (0x58)');
    expect(describeStatus(0x0e)).to.equal('ESME_RINVPASWD (0x0E)');
    expect(describeStatus(0x4242)).to.equal('status 0x4242');
  });
});

describe('checkSmppConfig', () => {
  const valid = { host: 'smsc.example.com', port: 2775, system_id: 'dispatch', password: 'secret' };

  it('accepts a complete config, with system_type and tls or without', () => {
    expect(checkSmppConfig(valid)).to.equal(null);
    expect(checkSmppConfig({ ...valid, system_type: 'VMA', tls: true })).to.equal(null);
    expect(checkSmppConfig({ ...valid, host: '10.0.0.7', password: '' })).to.equal(null);
  });

  it('names the field that is wrong', () => {
    const param = (config: unknown): string | undefined => checkSmppConfig(config)?.param;
    expect(param(null)).to.equal('config');
    expect(param([])).to.equal('config');
    expect(param({ ...valid, url: 'x' })).to.equal('config.url');
    expect(param({ ...valid, host: undefined })).to.equal('config.host');
    expect(param({ ...valid, host: 'smsc example' })).to.equal('config.host');
    expect(param({ ...valid, port: 0 })).to.equal('config.port');
    expect(param({ ...valid, port: '2775' })).to.equal('config.port');
    expect(param({ ...valid, system_id: '' })).to.equal('config.system_id');
    expect(param({ ...valid, system_id: 'a'.repeat(65) })).to.equal('config.system_id');
    expect(param({ ...valid, system_id: 'dispätch' })).to.equal('config.system_id');
    expect(param({ ...valid, password: undefined })).to.equal('config.password');
    expect(param({ ...valid, password: 'a'.repeat(65) })).to.equal('config.password');
    expect(param({ ...valid, system_type: 5 })).to.equal('config.system_type');
    expect(param({ ...valid, tls: 'yes' })).to.equal('config.tls');
  });
});
