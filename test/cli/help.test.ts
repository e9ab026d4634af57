import { expect } from 'chai';
import { cli } from './run-cli.ts';

// --help everywhere, and usage errors exit 2 (commander's own errors included).

describe('dispatch: help and usage errors', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('--help lists every command, the settings and the exit codes, and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).to.equal(0);
    for (const command of [
      'serve',
      'migrate',
      'send',
      'bulk',
      'messages',
      'events',
      'inbound',
      'opt-outs',
      'accounts',
      'keys',
      'routes',
      'senders',
      'blocklist',
      'audit',
      'operators',
    ]) {
      expect(result.stdout).to.match(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(result.stdout).to.include('DISPATCH_API_KEY').and.include('credentials.json');
    expect(result.stdout).to.match(
      /Exit codes:[\s\S]*0 {2}success[\s\S]*1 {2}Dispatch refused[\s\S]*2 {2}usage error[\s\S]*3 {2}Dispatch unreachable[\s\S]*4 {2}bulk finished[^\n]*opt-outs add[\s\S]*5 {2}send --wait: [^\n]*failed or undelivered[\s\S]*6 {2}send --wait: no final state/,
    );
    expect(result.stderr).to.equal('');
  });

  it('a noun lists its verbs; a verb lists its options, --json and the connection options', async () => {
    const routes = await cli(['routes', '--help']);
    expect(routes.code).to.equal(0);
    for (const verb of ['create', 'list', 'get', 'update', 'assign', 'unassign']) expect(routes.stdout).to.match(new RegExp(`^  ${verb}\\b`, 'm'));
    const operators = await cli(['operators', '--help']);
    expect(operators.code).to.equal(0);
    for (const verb of ['create', 'list', 'revoke', 'current']) expect(operators.stdout).to.match(new RegExp(`^  ${verb}\\b`, 'm'));

    const send = await cli(['send', '--help']);
    expect(send.code).to.equal(0);
    for (const option of [
      '--to',
      '--from',
      '--body',
      '--reference',
      '--route-id',
      '--smart-encoding',
      '--no-smart-encoding',
      '--idempotency-key',
      '--json',
      '--url',
      '--api-key',
    ])
      expect(send.stdout).to.include(option);

    const create = await cli(['accounts', 'create', '--help']);
    expect(create.code).to.equal(0);
    for (const option of ['--email', '--name', '--company-name', '--country', '--currency', '--balance', '--json', '--admin-token'])
      expect(create.stdout).to.include(option);

    expect(send.stdout).to.include('--wait').and.include('--timeout');
    for (const option of ['--at <date-time>', '--validity <seconds>', '--dry-run']) expect(send.stdout).to.include(option);

    // Users have the README, not the project's internal operator contract.
    const serve = await cli(['serve', '--help']);
    expect(serve.code).to.equal(0);
    expect(serve.stdout).to.include('Configuration section of README.md').and.include('PUBLIC_URL');
    expect(serve.stdout).to.not.match(/operator contract/i);

    const help = await cli(['help', 'bulk']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('--csv').and.include('--column').and.include('--at').and.include('--validity').and.include('--dry-run');
    expect(help.stdout).to.match(/^  cancel \[options\] <bulk-id>/m);

    const messages = await cli(['messages', '--help']);
    for (const verb of ['get', 'list', 'cancel', 'story', 'search']) expect(messages.stdout).to.match(new RegExp(`^  ${verb}\\b`, 'm'));
    const list = await cli(['messages', 'list', '--help']);
    for (const option of ['--scheduled', '--send-after <date-time>', '--send-before <date-time>']) expect(list.stdout).to.include(option);
  });

  it('--help works on every command of the tree', async function () {
    // 31 Node processes: on a busy two-core machine that is more than mocha's 20 s, in parallel or not.
    this.timeout(90_000);
    const commands = [
      ['serve'],
      ['migrate'],
      ['send'],
      ['bulk'],
      ['bulk', 'cancel'],
      ['messages', 'get'],
      ['messages', 'list'],
      ['messages', 'cancel'],
      ['events', 'tail'],
      ['inbound', 'list'],
      ['inbound', 'tail'],
      ['opt-outs', 'list'],
      ['opt-outs', 'add'],
      ['opt-outs', 'remove'],
      ['accounts', 'create'],
      ['accounts', 'get'],
      ['accounts', 'credit'],
      ['keys', 'create'],
      ['routes', 'create'],
      ['routes', 'list'],
      ['routes', 'get'],
      ['routes', 'update'],
      ['routes', 'assign'],
      ['routes', 'unassign'],
      ['senders', 'create'],
      ['senders', 'list'],
      ['senders', 'approve'],
      ['senders', 'reject'],
      ['senders', 'suspend'],
      ['blocklist', 'add'],
      ['blocklist', 'remove'],
    ];
    // A few at a time: 31 at once only make each one slower on two cores.
    for (let start = 0; start < commands.length; start += 4) {
      const batch = commands.slice(start, start + 4);
      const results = await Promise.all(batch.map((command) => cli([...command, '--help'])));
      results.forEach((result, i) => {
        expect(result.code, batch[i].join(' ')).to.equal(0);
        expect(result.stdout, batch[i].join(' ')).to.include(`Usage: dispatch ${batch[i].join(' ')}`);
      });
    }
  });

  it('exits 2 on usage errors: no command, an unknown command or option, a missing or bad value', async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage: dispatch/],
      [['accounts'], /Usage: dispatch accounts/],
      [['bogus'], /unknown command 'bogus'/],
      [['send', '--to', '+14155550123', '--from', 'X'], /required option '--body <text>' not specified/],
      [['accounts', 'get'], /missing required argument 'account-id'/],
      [['opt-outs', 'add'], /missing required argument 'number'/],
      [['messages', 'cancel'], /missing required argument 'message-id'/],
      [['bulk', 'cancel'], /missing required argument 'bulk-id'/],
      [['bulk', '--csv', 'customers.csv', '--from', 'X'], /required option '--body <text>' not specified/],
      [['send', '--to', '+14155550123', '--from', 'X', '--body', 'Hi', '--at', 'tomorrow'], /Not a date-time with a zone/],
      [['accounts', 'get', 'acct_x', '--bogus'], /unknown option '--bogus'/],
      [['routes', 'create', '--name', 'r', '--provider', 'carrier-pigeon', '--config', '{}', '--price', '1'], /Allowed choices are simulator, http, smpp/],
      [['routes', 'create', '--name', 'r', '--provider', 'http', '--config', '{nope', '--price', '1'], /Not valid JSON/],
      [['routes', 'assign', 'acct_x', '1', '--priority', 'first'], /'--priority <n>' argument 'first' is invalid/],
      [['routes', 'update', '1'], /nothing to update/],
      [['routes', 'update', '1', '--active', '--inactive'], /cannot be used with/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((result, i) => {
      expect(result.code, cases[i][0].join(' ')).to.equal(2);
      expect(result.stderr, cases[i][0].join(' ')).to.match(cases[i][1]);
      expect(result.stdout, cases[i][0].join(' ')).to.equal('');
    });
  });

  it('--version prints the package version', async () => {
    const result = await cli(['--version']);
    expect(result.code).to.equal(0);
    expect(result.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
  });
});
