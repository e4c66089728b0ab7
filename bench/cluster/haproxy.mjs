/**
 * HAProxy for the cluster drill, one process with three front ends:
 *   db-all     TCP, every Galera node takes connections (leastconn): reads and writes spread;
 *   db-single  TCP, one node takes every connection, the others are backups; a stick table keeps
 *              the writer where it is after a failover (no fail-back, so never two writers);
 *   http       HTTP, round robin over the gateways, health-checked on /health.
 * The database checks log in as `haproxy_check` (no password, no privileges): a killed node
 * fails the check within two intervals, and `on-marked-down shutdown-sessions` then closes its
 * connections, so the gateways see them break instead of waiting on a dead peer.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startChild, stopChild, tail } from '../lib/processes.mjs';
import { freePort } from '../lib/servers.mjs';

export const CHECK_USER = 'haproxy_check';

function databaseSection(name, port, nodes, single) {
  const lines = [
    `listen ${name}`,
    `  bind 127.0.0.1:${port}`,
    '  mode tcp',
    '  option tcpka',
    `  option mysql-check user ${CHECK_USER} post-41`,
    // A connection refused by a node not yet marked down is tried once more, on another node.
    '  option redispatch 1',
    '  default-server inter 500ms fall 2 rise 3 on-marked-down shutdown-sessions',
  ];
  if (single) {
    lines.push('  stick-table type integer size 1', '  stick on int(1)');
  } else {
    lines.push('  balance leastconn');
  }
  for (const [index, node] of nodes.entries()) {
    const backup = single && index > 0 ? ' backup' : '';
    lines.push(`  server ${node.name} 127.0.0.1:${node.port} check${backup}`);
  }
  return lines.join('\n');
}

function httpSection(port, gateways) {
  return [
    'listen http',
    `  bind 127.0.0.1:${port}`,
    '  mode http',
    '  balance roundrobin',
    // The client's address for the gateways' per-client limits (they trust loopback proxies).
    '  option forwardfor',
    '  option httpchk GET /health',
    '  http-check expect status 200',
    // A connection the gateway refused is tried on another one: nothing was processed. A GET
    // whose gateway died before answering is resent too (a read changes nothing); a write that
    // reached a gateway is never resent, since it may have been applied (no doubles).
    '  retry-on conn-failure empty-response response-timeout',
    '  http-request disable-l7-retry unless METH_GET',
    '  option redispatch 1',
    '  default-server inter 500ms fall 2 rise 2',
    ...gateways.map((gateway) => `  server ${gateway.name} 127.0.0.1:${gateway.port} check`),
  ].join('\n');
}

export class Haproxy {
  constructor(dir) {
    this.dir = dir;
    this.configFile = path.join(dir, 'haproxy.cfg');
    this.logFile = path.join(dir, 'haproxy.log');
    this.child = null;
  }

  async allocate() {
    this.ports = { dbAll: await freePort(), dbSingle: await freePort(), http: await freePort() };
  }

  /** Writes the configuration for these nodes and gateways and (re)starts HAProxy. */
  async start(nodes, gateways) {
    const config = [
      'global',
      '  maxconn 4000',
      'defaults',
      '  timeout connect 2s',
      '  timeout client 120s',
      '  timeout server 120s',
      '  timeout check 2s',
      '  retries 3',
      databaseSection('db-all', this.ports.dbAll, nodes, false),
      databaseSection('db-single', this.ports.dbSingle, nodes, true),
      httpSection(this.ports.http, gateways),
      '',
    ].join('\n');
    writeFileSync(this.configFile, config);
    await this.stop();
    this.child = startChild('haproxy', ['-f', this.configFile, '-db'], { logFile: this.logFile });
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (this.child.exitCode !== null) {
      throw new Error(`haproxy did not start:\n${tail(this.logFile)}`);
    }
  }

  async stop() {
    if (this.child) await stopChild(this.child, 'SIGTERM', 3000);
    this.child = null;
  }
}
