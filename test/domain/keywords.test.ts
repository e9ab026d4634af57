import { expect } from 'chai';
import { DEFAULT_KEYWORDS, DEFAULT_REPLIES, matchKeyword, replyText, type KeywordKind, type KeywordSettings } from '../../domain/keywords.ts';

const DEFAULTS: KeywordSettings = { keywords: { opt_out: [], opt_in: [], help: [] }, replies: { opt_out: null, opt_in: null, help: null }, updatedAt: null };

/** The ways a handset sends a keyword: case mixed, padded, with punctuation after it. */
const variants = (keyword: string): string[] => {
  const mixed = [...keyword].map((char, index) => (index % 2 === 0 ? char.toLowerCase() : char.toUpperCase())).join('');
  return [keyword, keyword.toLowerCase(), mixed, `  ${mixed}!`, `${mixed}.`, `\t${keyword.toLowerCase()}?!\n`, `${mixed} ...`];
};

describe('matchKeyword', () => {
  const lists: [KeywordKind, string[]][] = [
    ['opt_out', ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'OPT-OUT', 'REMOVE', 'ARRET']],
    ['opt_in', ['START', 'UNSTOP', 'YES']],
    ['help', ['HELP', 'INFO']],
  ];
  for (const [kind, keywords] of lists) {
    it(`matches every ${kind} keyword of the issue in mixed case, padded and with trailing punctuation`, () => {
      expect([...DEFAULT_KEYWORDS[kind]]).to.have.members(keywords);
      for (const keyword of keywords) {
        for (const body of variants(keyword)) expect(matchKeyword(DEFAULTS, body), JSON.stringify(body)).to.deep.equal({ kind, keyword });
      }
    });
  }

  it('matches ARRÊT with its accent as ARRET', () => {
    expect(matchKeyword(DEFAULTS, 'Arrêt.')).to.deep.equal({ kind: 'opt_out', keyword: 'ARRET' });
  });

  it('matches the whole message only: a keyword inside a sentence, or with a leading word, is not one', () => {
    for (const body of ['Please stop', 'stop it', 'STOP STOP', 'STOPPING', 'non-stop', 'OPT OUT', 'OPTOUTS', '', '   ', '!!!', 'STO P']) {
      expect(matchKeyword(DEFAULTS, body), JSON.stringify(body)).to.equal(null);
    }
  });

  it("matches the account's own keywords of each list beside the defaults", () => {
    const settings: KeywordSettings = { ...DEFAULTS, keywords: { opt_out: ['HALT'], opt_in: ['RESUME'], help: ['AIDE'] } };
    expect(matchKeyword(settings, 'halt!')).to.deep.equal({ kind: 'opt_out', keyword: 'HALT' });
    expect(matchKeyword(settings, 'Resume')).to.deep.equal({ kind: 'opt_in', keyword: 'RESUME' });
    expect(matchKeyword(settings, 'aide?')).to.deep.equal({ kind: 'help', keyword: 'AIDE' });
    expect(matchKeyword(settings, 'stop')).to.deep.equal({ kind: 'opt_out', keyword: 'STOP' });
    expect(matchKeyword(DEFAULTS, 'halt')).to.equal(null);
  });
});

describe('replyText', () => {
  it("answers the account's text, or the short default when it has none", () => {
    const settings: KeywordSettings = { ...DEFAULTS, replies: { opt_out: null, opt_in: null, help: 'Acme alerts. Reply STOP to end.' } };
    expect(replyText(settings, 'help')).to.equal('Acme alerts. Reply STOP to end.');
    expect(replyText(settings, 'opt_out')).to.equal(DEFAULT_REPLIES.opt_out);
    for (const kind of ['opt_out', 'opt_in', 'help'] as const) expect(DEFAULT_REPLIES[kind].length).to.be.at.most(160);
  });
});
