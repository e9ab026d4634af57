import { describeFuzz } from '../fuzz/describe-fuzz.ts';
import { scenario } from './support/figures.ts';

// The same fuzzing as npm test's, with twenty times the requests per operation.
describeFuzz('fuzzing every operation of openapi.yaml at length', { valid: 150, mutated: 500 }, (counts) =>
  scenario('fuzzing every operation of openapi.yaml').fuzz(counts),
);
