import { describeFuzz } from './describe-fuzz.ts';

describeFuzz('fuzzing every operation of openapi.yaml', { valid: 8, mutated: 25 });
