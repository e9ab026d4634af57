import { createDatabase, type CreatedDatabase } from '../../db/databases.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { harness } from './harness.ts';

/**
 * A fresh, empty database on the server of the run's database, for a Dispatch of a test's own
 * whose settings differ from the shared instance's (every instance on one database works the
 * same queues), or for migrations run from the start. `drop` removes it.
 */
export const siblingDatabase = (): Promise<CreatedDatabase> => createDatabase(harness.database.url, `dispatch_sibling_${randomBase62(10).toLowerCase()}`);
