import type pg from 'pg';
import { inspectionPool } from './database-checks.ts';
import { DispatchProcess } from './dispatch-process.ts';
import { PostgresCluster } from './postgres-cluster.ts';

/** A chaos test's world: its own PostgreSQL cluster and database, a Dispatch process on it, and a pool to inspect it. */
export interface Stage {
  cluster: PostgresCluster;
  databaseUrl: string;
  pool: pg.Pool;
  dispatch: DispatchProcess;
  /** Stops everything; when the test failed, keeps the cluster's data and says where it and the logs are. */
  tearDown: (failed: boolean) => Promise<void>;
}

/** `env` is added to the Dispatch process's environment. */
export async function startStage(name: string, env: Record<string, string> = {}): Promise<Stage> {
  const cluster = await PostgresCluster.create();
  const databaseUrl = await cluster.createDatabase('dispatch');
  const pool = inspectionPool(databaseUrl);
  let dispatch: DispatchProcess;
  try {
    dispatch = await DispatchProcess.start({ databaseUrl, name, env });
  } catch (error) {
    await pool.end();
    await cluster.remove();
    throw error;
  }
  return {
    cluster,
    databaseUrl,
    pool,
    dispatch,
    tearDown: async (failed) => {
      await dispatch.stop();
      await pool.end();
      const kept = await cluster.remove(failed);
      if (kept) process.stderr.write(`\n${name}: a test failed; its PostgreSQL data is kept under ${kept}, Dispatch's log is ${dispatch.logFile}\n`);
    },
  };
}
