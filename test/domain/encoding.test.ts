import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_BODY_CODE_POINTS, codePointLength, detectEncoding, gsm7Septets, planSegments } from '../../domain/encoding.ts';
import type { Encoding, SegmentPlan } from '../../domain/encoding.ts';

// Independent copy of the GSM 03.38 default alphabet (ESC at 0x1B omitted).
const GSM_BASIC: readonly string[] = [
  ...'@£$¥èéùìòÇ\nØø\rÅå',
  ...'Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ',
  ...' !"#¤%&\'()*+,-./',
  ...'0123456789:;<=>?',
  ...'¡ABCDEFGHIJKLMNO',
  ...'PQRSTUVWXYZÄÖÑÜ§',
  ...'¿abcdefghijklmno',
  ...'pqrstuvwxyzäöñüà',
];
const GSM_EXTENSION: readonly string[] = ['\f', '^', '{', '}', '\\', '[', '~', ']', '|', '€'];
const NON_GSM_BMP: readonly string[] = [
  'ç',
  'ê',
  'á',
  'í',
  'ó',
  'ú',
  'â',
  'õ',
  'Ã',
  'È',
  'α',
  'Α',
  'ж',
  'Ж',
  '中',
  '日',
  'ש',
  'ع',
  '`',
  '\t',
  '\x1b',
  '\u00a0',
  '«',
  '»',
  '…',
  '–',
  '’',
  '“',
  '•',
  '\u200b',
  '\ufeff',
];
const ASTRAL: readonly string[] = ['😀', '👍', '🎉', '🚀', '𝄞', '🇫', '🀄', '𠜎'];

const PROPERTY_PARAMS = { seed: 42, numRuns: 500 };

const rep = (s: string, n: number): string => s.repeat(n);

/** Oracle: septets for GSM-7, UTF-16 code units for UCS-2. */
function unitsOf(text: string, encoding: Encoding): number {
  if (encoding === 'UCS-2') return text.length;
  let septets = 0;
  for (const ch of text) septets += GSM_EXTENSION.includes(ch) ? 2 : 1;
  return septets;
}

function limitsFor(plan: SegmentPlan): number {
  if (plan.encoding === 'GSM-7') return plan.segments > 1 ? 153 : 160;
  return plan.segments > 1 ? 67 : 70;
}

function partUnits(plan: SegmentPlan): number[] {
  return plan.parts.map((p) => unitsOf(p, plan.encoding));
}

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff;

describe('codePointLength', () => {
  it('returns 0 for the empty string', () => {
    expect(codePointLength('')).to.equal(0);
  });

  it('counts each ASCII character as one code point', () => {
    expect(codePointLength('hello')).to.equal(5);
  });

  it('counts an emoji outside the BMP as one code point', () => {
    expect('😀'.length).to.equal(2);
    expect(codePointLength('😀')).to.equal(1);
    expect(codePointLength('a😀b')).to.equal(3);
  });

  it('counts 1600 emoji as 1600 code points, the maximum body length', () => {
    const body = rep('😀', 1600);
    expect(codePointLength(body)).to.equal(1600);
    expect(codePointLength(body)).to.equal(MAX_BODY_CODE_POINTS);
  });

  it('counts lone surrogates as one code point each, like the string iterator', () => {
    expect(codePointLength('\ud83d')).to.equal(1);
    expect(codePointLength('\ude00\ud83d')).to.equal(2);
    expect(codePointLength('a\ud83dx')).to.equal(3);
  });

  it('agrees with [...s].length for arbitrary UTF-16 strings, including lone surrogates', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
    const mixed = fc.oneof(codeUnit, fc.constantFrom(...ASTRAL), fc.string({ unit: 'binary', maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(mixed, { maxLength: 200 }), (chunks) => {
        const s = chunks.join('');
        expect(codePointLength(s)).to.equal([...s].length);
      }),
      PROPERTY_PARAMS,
    );
  });
});

describe('detectEncoding', () => {
  it('knows 127 basic characters and 10 extension characters', () => {
    expect(GSM_BASIC).to.have.lengthOf(127);
    expect(new Set(GSM_BASIC).size).to.equal(127);
    expect(GSM_EXTENSION).to.have.lengthOf(10);
  });

  it('classifies every character of the GSM 03.38 basic alphabet as GSM-7', () => {
    for (const ch of GSM_BASIC) {
      expect(detectEncoding(ch), `U+${ch.charCodeAt(0).toString(16)}`).to.equal('GSM-7');
    }
    expect(detectEncoding(GSM_BASIC.join(''))).to.equal('GSM-7');
  });

  it('classifies every extension-table character as GSM-7', () => {
    for (const ch of GSM_EXTENSION) {
      expect(detectEncoding(ch), JSON.stringify(ch)).to.equal('GSM-7');
    }
  });

  it('classifies newline and carriage return as GSM-7', () => {
    expect(detectEncoding('\n')).to.equal('GSM-7');
    expect(detectEncoding('\r')).to.equal('GSM-7');
    expect(detectEncoding('line one\r\nline two')).to.equal('GSM-7');
  });

  it('classifies é, uppercase Ç and € as GSM-7', () => {
    expect(detectEncoding('é')).to.equal('GSM-7');
    expect(detectEncoding('Ç')).to.equal('GSM-7');
    expect(detectEncoding('€')).to.equal('GSM-7');
  });

  it('classifies lowercase ç as UCS-2 because only uppercase Ç is in the basic table', () => {
    expect(detectEncoding('ç')).to.equal('UCS-2');
    expect(detectEncoding('Garçon')).to.equal('UCS-2');
  });

  it('classifies characters just outside the GSM alphabet as UCS-2', () => {
    for (const ch of NON_GSM_BMP) {
      expect(detectEncoding(ch), `U+${ch.charCodeAt(0).toString(16)}`).to.equal('UCS-2');
    }
  });

  it('classifies the escape character itself as UCS-2 because it is not a user character', () => {
    expect(detectEncoding('\x1b')).to.equal('UCS-2');
  });

  it('classifies emoji as UCS-2', () => {
    for (const ch of ASTRAL) expect(detectEncoding(ch)).to.equal('UCS-2');
    expect(detectEncoding('Thanks 👍')).to.equal('UCS-2');
  });

  it('classifies a long GSM-7 body as UCS-2 when a single non-GSM character is appended', () => {
    expect(detectEncoding(rep('a', 1000))).to.equal('GSM-7');
    expect(detectEncoding(rep('a', 1000) + 'ж')).to.equal('UCS-2');
  });

  it('classifies the empty body as GSM-7', () => {
    expect(detectEncoding('')).to.equal('GSM-7');
  });

  it('classifies exactly the GSM basic and extension characters as GSM-7 across the whole BMP', () => {
    const gsm = new Set([...GSM_BASIC, ...GSM_EXTENSION]);
    for (let u = 0; u <= 0xffff; u++) {
      const ch = String.fromCharCode(u);
      const expected: Encoding = gsm.has(ch) ? 'GSM-7' : 'UCS-2';
      if (detectEncoding(ch) !== expected) expect.fail(`U+${u.toString(16)} should be ${expected}`);
    }
  });
});

describe('gsm7Septets', () => {
  it('counts each basic character as one septet', () => {
    expect(gsm7Septets('Hello @ £5')).to.equal(10);
    expect(gsm7Septets(GSM_BASIC.join(''))).to.equal(127);
  });

  it('counts each extension character as two septets', () => {
    expect(gsm7Septets('€')).to.equal(2);
    expect(gsm7Septets(GSM_EXTENSION.join(''))).to.equal(20);
    expect(gsm7Septets('{a}')).to.equal(5);
  });

  it('returns 0 for the empty body', () => {
    expect(gsm7Septets('')).to.equal(0);
  });

  it('throws a RangeError for a body that is not GSM-7', () => {
    expect(() => gsm7Septets('ç')).to.throw(RangeError, /U\+00E7/);
    expect(() => gsm7Septets('hi 😀')).to.throw(RangeError, /U\+1F600 at index 3/);
    expect(() => gsm7Septets('\x1b')).to.throw(RangeError);
  });
});

describe('planSegments', () => {
  describe('GSM-7 boundaries', () => {
    const cases: Array<[number, number]> = [
      [1, 1],
      [153, 1],
      [160, 1],
      [161, 2],
      [306, 2],
      [307, 3],
      [459, 3],
      [460, 4],
      [1600, 11],
    ];
    for (const [septets, segments] of cases) {
      it(`plans ${septets} GSM-7 septet${septets === 1 ? '' : 's'} as ${segments} segment${segments === 1 ? '' : 's'}`, () => {
        const plan = planSegments(rep('a', septets));
        expect(plan.encoding).to.equal('GSM-7');
        expect(plan.units).to.equal(septets);
        expect(plan.segments).to.equal(segments);
        expect(plan.parts).to.have.lengthOf(segments);
      });
    }

    it('keeps a 160-septet body whole in one part', () => {
      const body = rep('a', 160);
      expect(planSegments(body).parts).to.deep.equal([body]);
    });

    it('splits 161 GSM-7 septets into two segments of 153 and 8', () => {
      const plan = planSegments(rep('a', 161));
      expect(plan.parts).to.deep.equal([rep('a', 153), rep('a', 8)]);
    });
  });

  describe('GSM-7 extension characters', () => {
    it('fits 158 a + € (160 septets) in one segment', () => {
      const body = rep('a', 158) + '€';
      const plan = planSegments(body);
      expect(plan).to.deep.equal({ encoding: 'GSM-7', segments: 1, units: 160, parts: [body] });
    });

    it('splits 159 a + € (161 septets) into two segments', () => {
      const plan = planSegments(rep('a', 159) + '€');
      expect(plan.encoding).to.equal('GSM-7');
      expect(plan.units).to.equal(161);
      expect(plan.segments).to.equal(2);
      expect(plan.parts).to.deep.equal([rep('a', 153), rep('a', 6) + '€']);
    });

    it('moves an extension character that would occupy septets 153 and 154 whole to the next segment', () => {
      const plan = planSegments(rep('a', 152) + '€' + rep('a', 10));
      expect(plan.units).to.equal(164);
      expect(plan.segments).to.equal(2);
      expect(plan.parts).to.deep.equal([rep('a', 152), '€' + rep('a', 10)]);
      expect(partUnits(plan)).to.deep.equal([152, 12]);
    });

    it('keeps an extension character that ends exactly on septet 153 in the first segment', () => {
      const plan = planSegments(rep('a', 151) + '€' + rep('a', 10));
      expect(plan.parts).to.deep.equal([rep('a', 151) + '€', rep('a', 10)]);
    });

    it('can need more segments than ceil(septets / 153) when an escape pair moves', () => {
      const plan = planSegments(rep('a', 152) + '€' + rep('a', 152));
      expect(plan.units).to.equal(306);
      expect(Math.ceil(plan.units / 153)).to.equal(2);
      expect(plan.segments).to.equal(3);
      expect(partUnits(plan)).to.deep.equal([152, 153, 1]);
    });

    it('fits 80 euro signs (160 septets) in one segment and splits 81 into two', () => {
      expect(planSegments(rep('€', 80)).segments).to.equal(1);
      const plan = planSegments(rep('€', 81));
      expect(plan.units).to.equal(162);
      expect(plan.parts).to.deep.equal([rep('€', 76), rep('€', 5)]);
    });
  });

  describe('UCS-2 boundaries', () => {
    const cases: Array<[number, number]> = [
      [1, 1],
      [67, 1],
      [70, 1],
      [71, 2],
      [134, 2],
      [135, 3],
      [201, 3],
      [202, 4],
    ];
    for (const [units, segments] of cases) {
      it(`plans ${units} UCS-2 unit${units === 1 ? '' : 's'} as ${segments} segment${segments === 1 ? '' : 's'}`, () => {
        const plan = planSegments(rep('ж', units));
        expect(plan.encoding).to.equal('UCS-2');
        expect(plan.units).to.equal(units);
        expect(plan.segments).to.equal(segments);
        expect(plan.parts).to.have.lengthOf(segments);
      });
    }

    it('splits 71 UCS-2 units into two segments of 67 and 4', () => {
      expect(planSegments(rep('ж', 71)).parts).to.deep.equal([rep('ж', 67), rep('ж', 4)]);
    });

    it('switches the whole body to UCS-2 when a GSM-7 body contains one emoji', () => {
      const plan = planSegments(rep('a', 100) + '😀');
      expect(plan.encoding).to.equal('UCS-2');
      expect(plan.units).to.equal(102);
      expect(plan.segments).to.equal(2);
      expect(plan.parts).to.deep.equal([rep('a', 67), rep('a', 33) + '😀']);
    });
  });

  describe('UCS-2 surrogate pairs', () => {
    it('counts an emoji as two UTF-16 units', () => {
      expect(planSegments('😀')).to.deep.equal({ encoding: 'UCS-2', segments: 1, units: 2, parts: ['😀'] });
    });

    it('fits 68 ж + emoji (70 units) in one segment and splits 69 ж + emoji (71 units) into two', () => {
      expect(planSegments(rep('ж', 68) + '😀').segments).to.equal(1);
      const plan = planSegments(rep('ж', 69) + '😀');
      expect(plan.units).to.equal(71);
      expect(plan.parts).to.deep.equal([rep('ж', 67), rep('ж', 2) + '😀']);
    });

    it('moves an emoji that would straddle the 67-unit boundary whole to the next segment', () => {
      const plan = planSegments(rep('ж', 66) + '😀' + rep('ж', 10));
      expect(plan.units).to.equal(78);
      expect(plan.segments).to.equal(2);
      expect(plan.parts).to.deep.equal([rep('ж', 66), '😀' + rep('ж', 10)]);
    });

    it('can need more segments than ceil(units / 67) when a surrogate pair moves', () => {
      const plan = planSegments(rep('ж', 66) + '😀' + rep('ж', 66));
      expect(plan.units).to.equal(134);
      expect(Math.ceil(plan.units / 67)).to.equal(2);
      expect(plan.segments).to.equal(3);
      expect(partUnits(plan)).to.deep.equal([66, 67, 1]);
    });

    it('fits 35 emoji (70 units) in one segment and puts 33 emoji in each full segment beyond that', () => {
      expect(planSegments(rep('😀', 35)).segments).to.equal(1);
      const plan = planSegments(rep('😀', 36));
      expect(plan.units).to.equal(72);
      expect(plan.parts).to.deep.equal([rep('😀', 33), rep('😀', 3)]);
    });

    it('plans the maximum body of 1600 emoji as 49 segments', () => {
      const plan = planSegments(rep('😀', MAX_BODY_CODE_POINTS));
      expect(plan.units).to.equal(3200);
      expect(plan.segments).to.equal(49);
      expect(plan.parts.join('')).to.equal(rep('😀', MAX_BODY_CODE_POINTS));
    });

    it('treats a lone high surrogate as a single unit that may end a segment', () => {
      const body = rep('ж', 66) + '\ud83d' + rep('ж', 10);
      const plan = planSegments(body);
      expect(plan.units).to.equal(77);
      expect(plan.parts).to.deep.equal([rep('ж', 66) + '\ud83d', rep('ж', 10)]);
    });
  });

  describe('empty body', () => {
    it('plans the empty body as one GSM-7 segment with a single empty part and 0 units', () => {
      expect(planSegments('')).to.deep.equal({ encoding: 'GSM-7', segments: 1, units: 0, parts: [''] });
    });
  });

  describe('properties', () => {
    const gsmChar = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...GSM_BASIC) }, { weight: 2, arbitrary: fc.constantFrom(...GSM_EXTENSION) });
    const anyChar = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...GSM_BASIC) },
      { weight: 2, arbitrary: fc.constantFrom(...GSM_EXTENSION) },
      { weight: 1, arbitrary: fc.constantFrom(...NON_GSM_BMP) },
      { weight: 2, arbitrary: fc.constantFrom(...ASTRAL) },
    );
    // Half the bodies are pure GSM-7 (otherwise almost every body would be UCS-2).
    const body = fc.oneof(
      fc.array(gsmChar, { minLength: 0, maxLength: 700 }).map((cs) => cs.join('')),
      fc.array(anyChar, { minLength: 0, maxLength: 700 }).map((cs) => cs.join('')),
    );

    it('re-joins the parts to the original body', () => {
      fc.assert(
        fc.property(body, (b) => {
          expect(planSegments(b).parts.join('')).to.equal(b);
        }),
        PROPERTY_PARAMS,
      );
    });

    it('reports as many segments as parts', () => {
      fc.assert(
        fc.property(body, (b) => {
          const plan = planSegments(b);
          expect(plan.segments).to.equal(plan.parts.length);
          expect(plan.segments).to.be.at.least(1);
        }),
        PROPERTY_PARAMS,
      );
    });

    it('uses the encoding that detectEncoding reports', () => {
      fc.assert(
        fc.property(body, (b) => {
          expect(planSegments(b).encoding).to.equal(detectEncoding(b));
        }),
        PROPERTY_PARAMS,
      );
    });

    it('counts total units as septets for GSM-7 and UTF-16 units for UCS-2', () => {
      fc.assert(
        fc.property(body, (b) => {
          const plan = planSegments(b);
          expect(plan.units).to.equal(unitsOf(b, plan.encoding));
          if (plan.encoding === 'GSM-7') expect(plan.units).to.equal(gsm7Septets(b));
          else expect(() => gsm7Septets(b)).to.throw(RangeError);
        }),
        PROPERTY_PARAMS,
      );
    });

    it('fits every part within its segment limit', () => {
      fc.assert(
        fc.property(body, (b) => {
          const plan = planSegments(b);
          const limit = limitsFor(plan);
          for (const units of partUnits(plan)) expect(units).to.be.at.most(limit);
        }),
        PROPERTY_PARAMS,
      );
    });

    it('uses one segment exactly when the body fits the single-segment limit', () => {
      fc.assert(
        fc.property(body, (b) => {
          const plan = planSegments(b);
          const single = plan.encoding === 'GSM-7' ? 160 : 70;
          const multi = plan.encoding === 'GSM-7' ? 153 : 67;
          expect(plan.segments === 1).to.equal(plan.units <= single);
          if (plan.segments > 1) expect(plan.segments).to.be.at.least(Math.ceil(plan.units / multi));
        }),
        PROPERTY_PARAMS,
      );
    });

    it('never starts a part with a low surrogate or ends one with a high surrogate', () => {
      fc.assert(
        fc.property(body, (b) => {
          for (const part of planSegments(b).parts) {
            if (part.length === 0) continue;
            expect(isLow(part.charCodeAt(0)), 'part starts with a low surrogate').to.equal(false);
            expect(isHigh(part.charCodeAt(part.length - 1)), 'part ends with a high surrogate').to.equal(false);
          }
        }),
        PROPERTY_PARAMS,
      );
    });

    it('fills segments greedily: no part could take the first character of the next part', () => {
      fc.assert(
        fc.property(body, (b) => {
          const plan = planSegments(b);
          if (plan.segments === 1) return;
          const limit = limitsFor(plan);
          for (let i = 0; i + 1 < plan.parts.length; i++) {
            const part = plan.parts[i];
            const next = plan.parts[i + 1];
            const first = String.fromCodePoint(next.codePointAt(0)!);
            expect(part.length).to.be.greaterThan(0);
            expect(unitsOf(part + first, plan.encoding)).to.be.greaterThan(limit);
          }
        }),
        PROPERTY_PARAMS,
      );
    });
  });
});
