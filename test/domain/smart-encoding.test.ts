import { expect } from 'chai';
import { detectEncoding, planSegments } from '../../domain/encoding.ts';
import { LOOK_ALIKES, replaceLookAlikes, smartEncode } from '../../domain/smart-encoding.ts';

// Independent copy of the GSM 03.38 alphabet: its basic set (ESC omitted) and extension table.
const GSM_CHARACTERS =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà' + '\f^{}\\[~]|€';

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
const shown = (text: string) => (text === '' ? 'nothing' : JSON.stringify(text));

/** Smart encoding of a body, as the send path plans it. */
const smart = (body: string) => smartEncode(body, planSegments(body));

describe('smart encoding: the table of look-alikes', () => {
  for (const [lookAlike, replacement] of LOOK_ALIKES) {
    it(`replaces ${JSON.stringify(lookAlike)} (${codePoint(lookAlike)}) with ${shown(replacement)}, which is GSM-7`, () => {
      expect([...GSM_CHARACTERS], 'a GSM-7 character is never replaced').not.to.include(lookAlike);
      expect(detectEncoding(lookAlike)).to.equal('UCS-2');
      expect(
        [...replacement].every((ch) => GSM_CHARACTERS.includes(ch)),
        'the replacement is GSM-7',
      ).to.equal(true);
      expect(replaceLookAlikes(`a${lookAlike}b`)).to.equal(`a${replacement}b`);
      const sent = smart(`Code ${lookAlike}42`);
      expect(sent).to.deep.include({ body: `Code ${replacement}42`, smartEncoded: true });
      expect(sent.plan.encoding).to.equal('GSM-7');
    });
  }

  it('covers the quotes, primes, dashes, ellipsis, spaces and invisible characters it promises', () => {
    const named: Record<string, string> = {
      '«': '"',
      '»': '"',
      '“': '"',
      '”': '"',
      '‟': '"',
      '❝': '"',
      '❞': '"',
      '〝': '"',
      '〞': '"',
      '„': '"',
      '″': '"',
      '‘': "'",
      '’': "'",
      ʻ: "'",
      ʼ: "'",
      '´': "'",
      '`': "'",
      '′': "'",
      '‚': ',',
      '‐': '-',
      '‑': '-',
      '‒': '-',
      '–': '-',
      '—': '-',
      '―': '-',
      '⁃': '-',
      '−': '-',
      '…': '...',
      '\u00a0': ' ',
      '\u202f': ' ',
      '\u205f': ' ',
      '\u3000': ' ',
      '\u1680': ' ',
      '\u200b': '',
      '\u200c': '',
      '\u200d': '',
      '\u2060': '',
      '\ufeff': '',
    };
    for (let cp = 0x2000; cp <= 0x200a; cp++) named[String.fromCharCode(cp)] = ' ';
    for (const [ch, replacement] of Object.entries(named)) expect(LOOK_ALIKES.get(ch), codePoint(ch)).to.equal(replacement);
  });

  it('takes every accented Latin-1 letter (and Ÿ) that GSM-7 lacks to the same letter without its accent', () => {
    const accented = [...'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿŸ'].filter((ch) => !GSM_CHARACTERS.includes(ch));
    expect(accented).to.have.length(36);
    for (const ch of accented) expect(LOOK_ALIKES.get(ch), ch).to.equal(ch.normalize('NFD').replace(/\p{M}/gu, ''));
  });

  it('maps each fullwidth punctuation mark to the ASCII character it is a wide form of, the backtick excepted', () => {
    const fullwidth = [...LOOK_ALIKES.keys()].filter((ch) => ch >= '\uff01' && ch <= '\uff5e');
    expect(fullwidth).to.have.length.above(25);
    for (const ch of fullwidth) expect(LOOK_ALIKES.get(ch), codePoint(ch)).to.equal(ch === '\uff40' ? "'" : ch.normalize('NFKC'));
  });
});

describe('smart encoding: the body sent', () => {
  it('leaves every GSM-7 character alone, in a body of them all or beside look-alikes', () => {
    expect(replaceLookAlikes(GSM_CHARACTERS)).to.equal(GSM_CHARACTERS);
    expect(smart(GSM_CHARACTERS)).to.deep.include({ body: GSM_CHARACTERS, smartEncoded: false });
    const body = 'Ça coûte 5€ [promo] à Málaga? Ñandú ~ {ok} | ^_^';
    expect(smart(body)).to.deep.include({ body: 'Ça coute 5€ [promo] à Malaga? Ñandu ~ {ok} | ^_^', smartEncoded: true });
  });

  it('replaces curly quotes, a dash and a no-break space, and the body goes GSM-7 in one segment', () => {
    const given = '“Parcel AB-1042” arrives today\u00a0– we’ll text you… ';
    expect(planSegments(given)).to.include({ encoding: 'UCS-2', segments: 1 });
    const sent = smart(given);
    expect(sent).to.deep.include({ body: '"Parcel AB-1042" arrives today - we\'ll text you... ', smartEncoded: true });
    expect(sent.plan).to.include({ encoding: 'GSM-7', segments: 1 });
  });

  it('sends a body as given when something in it has no look-alike, so an emoji keeps its joiners and the quotes stay curly', () => {
    for (const given of ['“Hi” 😀', 'Family: 👨\u200d👩\u200d👧 – “home”', '“Привет”']) {
      const sent = smart(given);
      expect(sent, given).to.deep.include({ body: given, smartEncoded: false });
      expect(sent.plan.encoding).to.equal('UCS-2');
    }
  });

  it('sends a body as given when the replaced body would take more segments (ellipses are three septets each)', () => {
    const given = '…'.repeat(70);
    expect(planSegments(given).segments).to.equal(1);
    expect(planSegments(replaceLookAlikes(given)).segments).to.equal(2);
    expect(smart(given)).to.deep.include({ body: given, smartEncoded: false });
    // Where the replaced body takes as many segments or fewer, it is sent.
    const saving = `${'…'.repeat(20)}${'x'.repeat(60)}`;
    expect(smart(saving)).to.deep.include({ body: `${'.'.repeat(60)}${'x'.repeat(60)}`, smartEncoded: true });
  });

  it('sends a body of nothing but invisible characters as given rather than empty', () => {
    expect(smart('\u200b\ufeff')).to.deep.include({ body: '\u200b\ufeff', smartEncoded: false });
  });
});
