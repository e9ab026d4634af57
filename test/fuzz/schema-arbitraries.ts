import fc from 'fast-check';

/** The part of an OpenAPI 3.0 schema object (dereferenced) that the generator reads. */
export interface Schema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  enum?: unknown[];
  nullable?: boolean;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
}

/**
 * Values worth trying for a field, by its name, beside what its schema generates: ids and
 * numbers that exist in the fuzzing world, so that valid requests get past the rules into the
 * code behind them.
 */
export type Known = Record<string, unknown[]>;

// Generated sizes stay small: the point is variety of shape, and the hostile sizes come from the mutations.
const MAX_GENERATED_LENGTH = 40;
const MAX_GENERATED_ITEMS = 4;
const MAX_GENERATED_NUMBER = 1_000_000;

/** Webhook and provider URLs point at a closed local port: fuzzing never reaches the network. */
const LOCAL_URL = fc.constantFrom('http://127.0.0.1:9/fuzz', 'https://127.0.0.1:9/fuzz?x=1');

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? MAX_GENERATED_LENGTH, Math.max(minLength, MAX_GENERATED_LENGTH));
  const fits = (text: string) => [...text].length >= minLength && [...text].length <= (schema.maxLength ?? Infinity);
  switch (schema.format) {
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
      return LOCAL_URL;
    default:
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
      return fc.oneof(fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }), fc.string({ minLength, maxLength, unit: 'grapheme' })).filter(fits);
  }
}

/** Amounts carry at most 4 decimal places, as the document requires of money. */
function numberOf(schema: Schema): fc.Arbitrary<number> {
  const min = Math.ceil((schema.minimum ?? 0) * 10_000);
  const max = Math.floor(Math.min(schema.maximum ?? MAX_GENERATED_NUMBER, MAX_GENERATED_NUMBER) * 10_000);
  return fc.integer({ min, max }).map((tenThousandths) => tenThousandths / 10_000);
}

function objectOf(schema: Schema, known: Known): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  const model = Object.fromEntries(properties.map(([name, property]) => [name, fieldArbitrary(name, property, known)]));
  return fc.record(model, { requiredKeys: schema.required ?? [] });
}

/** Values that a schema accepts (and, through `known`, values that exist). */
export function arbitraryOf(schema: Schema, known: Known = {}): fc.Arbitrary<unknown> {
  let base: fc.Arbitrary<unknown>;
  if (schema.enum) base = fc.constantFrom(...schema.enum);
  else {
    switch (schema.type) {
      case 'string':
        base = stringOf(schema);
        break;
      case 'integer':
        base = fc.integer({ min: schema.minimum ?? -MAX_GENERATED_NUMBER, max: Math.min(schema.maximum ?? MAX_GENERATED_NUMBER, MAX_GENERATED_NUMBER) });
        break;
      case 'number':
        base = numberOf(schema);
        break;
      case 'boolean':
        base = fc.boolean();
        break;
      case 'array': {
        const items = arbitraryOf(schema.items ?? {}, known);
        const size = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? MAX_GENERATED_ITEMS, MAX_GENERATED_ITEMS) };
        base = schema.uniqueItems ? fc.uniqueArray(items, { ...size, selector: (item) => JSON.stringify(item) }) : fc.array(items, size);
        break;
      }
      case 'object':
        base = objectOf(schema, known);
        break;
      default:
        base = fc.jsonValue({ maxDepth: 2 });
    }
  }
  return schema.nullable ? fc.option(base, { nil: null, freq: 4 }) : base;
}

/** A named field: its schema's values, or often one of the values known to exist. */
export function fieldArbitrary(name: string, schema: Schema, known: Known): fc.Arbitrary<unknown> {
  const generated = arbitraryOf(schema, known);
  const existing = known[name];
  return existing?.length ? fc.oneof({ arbitrary: fc.constantFrom(...existing), weight: 3 }, { arbitrary: generated, weight: 1 }) : generated;
}
