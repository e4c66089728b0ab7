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

/** A binary-log server with database `name` made of `schema`, and its root connection on it. */
export async function startBinlogDatabase(
  name: string,
  schema: string,
): Promise<{ server: PrivateServer; writer: mysql.Connection }> {
  const server = await startBinlogServer();
  const writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${name}`);
  await writer.query(schema);
  return { server, writer };
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

/**
 * A Galera cluster of `size` private nodes with the binary log on, as the change feed needs it
 * on a cluster (docs/changes.md, "Several hosts"): every node logs the writes it applies
 * (`log_slave_updates`) under the cluster's GTIDs (`wsrep_gtid_mode`, one domain, one
 * `server_id`). The first bootstraps; each other joins by a mysqldump state transfer (rsync's
 * daemon, started as root, could not write into a private server's data directory).
 */
export async function startGaleraCluster(size: number): Promise<PrivateServer[]> {
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({ group: await freePort(), ist: await freePort() })),
  );
  const members = ports.map((p) => `127.0.0.1:${p.group}`).join(',');
  const nodeArgs = (index: number) => {
    const own = ports[index] as { group: number; ist: number };
    return [
      '--wsrep-on=ON',
      `--wsrep-provider=${GALERA_PROVIDER}`,
      '--wsrep-cluster-name=tablegate-test',
      `--wsrep-cluster-address=gcomm://${index === 0 ? '' : members}`,
      `--wsrep-node-address=127.0.0.1:${own.group}`,
      `--wsrep-node-name=node${index + 1}`,
      '--wsrep-sst-method=mysqldump',
      '--wsrep-sst-auth=root:',
      // Every node after the first weighs more than the ones before it together: the last one
      // alone is still a primary component (a majority) when the others are killed.
      `--wsrep-provider-options=base_port=${own.group};ist.recv_addr=127.0.0.1:${own.ist};gcache.size=16M;pc.weight=${2 ** index}`,
      '--innodb-autoinc-lock-mode=2',
      ...binlogArgs(1),
      '--log-slave-updates=ON',
      '--wsrep-gtid-mode=ON',
      '--wsrep-gtid-domain-id=1',
    ];
  };
  const nodes: PrivateServer[] = [];
  try {
    for (let index = 0; index < size; index++) {
      nodes.push(await startPrivateServer(undefined, nodeArgs(index)));
      await waitForClusterSize(nodes[0] as PrivateServer, index + 1);
    }
    for (const node of nodes) await waitForStatus(node, 'wsrep_local_state_comment', 'Synced');
    return nodes;
  } catch (error) {
    await Promise.all(nodes.map((node) => node.destroy().catch(() => {})));
    throw error;
  }
}

async function waitForClusterSize(node: PrivateServer, size: number): Promise<void> {
  await waitForStatus(node, 'wsrep_cluster_size', String(size));
}

async function waitForStatus(node: PrivateServer, name: string, value: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const admin = await rootConnection(node).catch(() => null);
    try {
      const [[row]] = admin
        ? await admin.query<mysql.RowDataPacket[]>('SHOW STATUS LIKE ?', [name])
        : [[undefined]];
      if (row?.Value === value) return;
    } finally {
      await admin?.end();
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become ${value} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
