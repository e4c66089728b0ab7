/**
 * What tests do with the private servers of src/demo/private-server.ts: a root connection to set
 * one up, and a one-node Galera cluster (Debian's galera-4) for the cluster-aware paths.
 */
import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import {
  binlogArgs,
  findServerBinary,
  freePort,
  type PrivateServer,
  startPrivateServer,
} from '../../src/demo/private-server.js';

/** A root connection that takes several statements at once, for creating databases and users. */
export function rootConnection(server: PrivateServer): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    multipleStatements: true,
  });
}

/** A private server with the binary log on, as the change feed needs it (docs/changes.md). */
export function startBinlogServer(): Promise<PrivateServer> {
  return startPrivateServer(undefined, binlogArgs());
}

/** Debian's galera-4 puts the provider in one of these. */
const GALERA_PROVIDER = ['/usr/lib/galera/libgalera_smm.so', '/usr/lib/libgalera_smm.so'].find(
  (file) => existsSync(file),
);

/** A Galera node can run here: the provider is installed and the server is MariaDB. */
export const galeraAvailable =
  GALERA_PROVIDER !== undefined && findServerBinary()?.flavour === 'mariadb';

/**
 * A private server that is a Galera cluster of one (wsrep on, bootstrapped, Synced). The server
 * takes connections before the node is ready (a statement on a table is refused with 1047 until
 * then, which a loaded machine showed in a test's setup): this waits for wsrep_ready.
 */
export async function startGaleraNode(): Promise<PrivateServer> {
  const gcomm = await freePort();
  const node = await startPrivateServer(undefined, [
    '--wsrep-on=ON',
    `--wsrep-provider=${GALERA_PROVIDER}`,
    '--wsrep-cluster-address=gcomm://',
    `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${gcomm};gcache.size=16M`,
    '--wsrep-node-address=127.0.0.1',
    '--binlog-format=ROW',
    '--innodb-autoinc-lock-mode=2',
  ]);
  const admin = await rootConnection(node);
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [[ready]] = await admin.query<mysql.RowDataPacket[]>("SHOW STATUS LIKE 'wsrep_ready'");
      if (ready?.Value === 'ON') return node;
      if (Date.now() > deadline) {
        await node.destroy();
        throw new Error('the Galera node did not become ready within 30 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await admin.end();
  }
}
