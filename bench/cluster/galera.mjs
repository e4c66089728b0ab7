/**
 * A MariaDB Galera cluster on this machine, for the cluster drill: each node a mariadbd with its
 * own data directory and four free ports (SQL, group communication, IST, SST), all on
 * 127.0.0.1. The first node bootstraps the cluster; the others join it one at a time by SST
 * (rsync). A node killed with SIGKILL and started again rejoins by IST from the gcache.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { startChild, stopChild, tail } from '../lib/processes.mjs';
import { freePort } from '../lib/servers.mjs';

const run = promisify(execFile);
const PROVIDER = '/usr/lib/galera/libgalera_smm.so';
const SERVER = '/usr/sbin/mariadbd';

/** What the drill needs installed; the missing ones, with the Debian package that has them. */
export function missingGaleraTools() {
  const missing = [];
  if (!existsSync(SERVER)) missing.push('mariadbd (apt-get install mariadb-server)');
  if (!existsSync(PROVIDER)) missing.push('libgalera_smm.so (apt-get install galera-4)');
  if (!existsSync('/usr/bin/rsync')) missing.push('rsync (apt-get install rsync)');
  return missing;
}

/**
 * As root, the nodes run as the `mysql` user: the rsync daemon a joiner starts for SST drops
 * root's privileges to `nobody` and could not write into a data directory only root may enter.
 */
const AS_ROOT = process.getuid?.() === 0;

function ownForServer(dir) {
  if (!AS_ROOT) return;
  return run('chown', ['-R', 'mysql:mysql', dir]);
}

export class GaleraNode {
  constructor(cluster, index, ports) {
    this.cluster = cluster;
    this.index = index;
    this.name = `node${index + 1}`;
    this.ports = ports;
    this.dir = path.join(cluster.dir, this.name);
    this.dataDir = path.join(this.dir, 'data');
    this.logFile = path.join(this.dir, 'mariadbd.log');
    this.child = null;
  }

  get port() {
    return this.ports.sql;
  }

  /** A fresh data directory; or a copy of `from`'s (a joiner replaces it by SST anyway). */
  async install(from) {
    mkdirSync(this.dir, { recursive: true });
    if (from) {
      await run('cp', ['-a', from.dataDir, this.dataDir]);
      await ownForServer(this.dir);
      return;
    }
    await run('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${this.dataDir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...(AS_ROOT ? ['--user=mysql'] : []),
    ]);
    await ownForServer(this.dir);
  }

  args(bootstrap) {
    const { sql, group, ist, sst } = this.ports;
    const members = this.cluster.nodes.map((node) => `127.0.0.1:${node.ports.group}`).join(',');
    return [
      '--no-defaults',
      ...(AS_ROOT ? ['--user=mysql'] : []),
      `--datadir=${this.dataDir}`,
      `--port=${sql}`,
      '--bind-address=127.0.0.1',
      `--socket=${path.join(this.dir, 'mysql.sock')}`,
      `--pid-file=${path.join(this.dir, 'mysql.pid')}`,
      `--log-error=${this.logFile}`,
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=64M',
      '--max-connections=300',
      // What Galera requires of every node.
      '--binlog-format=ROW',
      '--default-storage-engine=InnoDB',
      '--innodb-autoinc-lock-mode=2',
      // The change feed's binary log (docs/changes.md, "Several hosts"): every node logs what
      // it applies, under the cluster's GTIDs.
      '--log-bin=binlog',
      '--binlog-row-image=FULL',
      '--log-slave-updates=ON',
      '--server-id=1',
      '--wsrep-gtid-mode=ON',
      '--wsrep-gtid-domain-id=1',
      '--wsrep-on=ON',
      `--wsrep-provider=${PROVIDER}`,
      '--wsrep-cluster-name=tablegate-drill',
      `--wsrep-cluster-address=gcomm://${members}`,
      `--wsrep-node-address=127.0.0.1:${group}`,
      `--wsrep-node-name=${this.name}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${sst}`,
      `--wsrep-provider-options=base_port=${group};ist.recv_addr=127.0.0.1:${ist};gcache.size=128M`,
      ...(bootstrap ? ['--wsrep-new-cluster'] : []),
    ];
  }

  /** Starts the node; resolves when it is Synced with the cluster. */
  async start({ bootstrap = false, timeoutMs = 120_000 } = {}) {
    this.child = startChild(SERVER, this.args(bootstrap), {
      logFile: path.join(this.dir, 'stdout.log'),
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`${this.name} exited while starting:\n${tail(this.logFile, 15)}`);
      }
      if ((await this.state().catch(() => null)) === 'Synced') return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${this.name} was not Synced within ${timeoutMs} ms:\n${tail(this.logFile)}`);
  }

  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, … */
  async state() {
    const [rows] = await this.query("SHOW STATUS LIKE 'wsrep_local_state_comment'");
    return rows[0]?.Value;
  }

  /** A statement on a short-lived root connection of this node (never through HAProxy). */
  async query(sql, params = []) {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: this.ports.sql,
      user: 'root',
      password: '',
      connectTimeout: 2000,
    });
    try {
      return await connection.query(sql, params);
    } finally {
      connection.destroy();
    }
  }

  /** A crash: SIGKILL, no clean shutdown. */
  async kill() {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    await this.child.exited;
    this.child = null;
  }

  async stop() {
    if (!this.child) return;
    await stopChild(this.child, 'SIGTERM', 20_000);
    this.child = null;
  }
}

export class GaleraCluster {
  constructor(dir, size) {
    this.dir = dir;
    this.nodes = [];
    this.size = size;
  }

  async allocate() {
    for (let index = 0; index < this.size; index++) {
      const ports = {
        sql: await freePort(),
        group: await freePort(),
        ist: await freePort(),
        sst: await freePort(),
      };
      this.nodes.push(new GaleraNode(this, index, ports));
    }
  }

  /** Installs every node, bootstraps the first, then joins the rest one by one (SST). */
  async start(log) {
    await this.allocate();
    // One install, copied: installs side by side collide on their temporary tables in /tmp.
    const [first, ...others] = this.nodes;
    await first.install();
    for (const node of others) await node.install(first);
    for (const [index, node] of this.nodes.entries()) {
      const started = Date.now();
      await node.start({ bootstrap: index === 0 });
      log(`${node.name} Synced on 127.0.0.1:${node.port} in ${seconds(started)} s`);
    }
  }

  /** Waits until every running node is Synced and has applied the same last write. */
  async settle(timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const states = await Promise.all(
        this.nodes.map(async (node) => {
          const [rows] = await node
            .query(
              "SHOW STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_last_committed', 'wsrep_cluster_size')",
            )
            .catch(() => [[]]);
          return Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
        }),
      );
      last = JSON.stringify(states);
      const synced = states.every((s) => s.wsrep_local_state_comment === 'Synced');
      const sameSeqno = new Set(states.map((s) => s.wsrep_last_committed)).size === 1;
      const whole = states.every((s) => Number(s.wsrep_cluster_size) === this.nodes.length);
      if (synced && sameSeqno && whole) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`the cluster did not settle within ${timeoutMs} ms: ${last}`);
  }

  async stop() {
    await Promise.all(this.nodes.map((node) => node.stop().catch(() => node.kill())));
  }
}

export function seconds(since) {
  return ((Date.now() - since) / 1000).toFixed(1);
}
