/**
 * The closest real check of deploy/ without Kubernetes (`npm run test:container`): the
 * Deployment's pod and container spec, with its ConfigMap and Secret and the kustomization's
 * image, turned into a `docker run` beside a MySQL reachable under the ConfigMap's host name;
 * then its probes are asked as the kubelet would ask them (readiness while MySQL is up, down and
 * back; liveness), and its preStop hook and SIGTERM run within the grace period.
 * A field of the spec this converter does not know fails the run instead of being ignored.
 * Usage: node test/container/deploy-run.mjs <locally built image>
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const DEPLOY = path.join(import.meta.dirname, '../../deploy');
const built = process.argv[2];
if (!built) throw new Error('usage: deploy-run.mjs <image>');
const id = `tablegate-k8s-${process.pid}`;

const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8' }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => console.log(line);
function fail(message) {
  throw new Error(`deploy-run: ${message}`);
}

// --- the manifests, as `kubectl apply -k deploy/` would see them ---------------------------
const kustomization = parseAllDocuments(
  readFileSync(path.join(DEPLOY, 'kustomization.yaml'), 'utf8'),
)[0].toJS();
const objects = kustomization.resources.flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(DEPLOY, file), 'utf8')).map((d) => d.toJS()),
);
const byKind = (kind, name) =>
  objects.find((o) => o.kind === kind && (!name || o.metadata.name === name)) ??
  fail(`no ${kind} ${name ?? ''} in deploy/`);
const deployment = byKind('Deployment');
const pod = deployment.spec.template.spec;
if (pod.containers.length !== 1) fail('expected one container');
const container = pod.containers[0];

const KNOWN = new Set([
  'name',
  'image',
  'imagePullPolicy',
  'envFrom',
  'env',
  'ports',
  'readinessProbe',
  'livenessProbe',
  'startupProbe',
  'lifecycle',
  'resources',
  'securityContext',
  'volumeMounts',
]);
const unknown = Object.keys(container).filter((k) => !KNOWN.has(k));
if (unknown.length) fail(`container fields this check does not translate: ${unknown.join(', ')}`);

/** The variables of the ConfigMaps and Secrets in envFrom, then env (values only). */
function environment(secretValues) {
  const env = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, byKind('ConfigMap', source.configMapRef.name).data);
    else if (source.secretRef) {
      const secret = byKind('Secret', source.secretRef.name);
      const decoded = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
      // The placeholders are to be replaced before applying (deploy/secret.yaml); so do we.
      Object.assign(env, decoded, secret.stringData, secretValues);
    } else fail(`envFrom source ${JSON.stringify(source)}`);
  }
  for (const variable of container.env ?? []) {
    if (!('value' in variable)) fail(`env ${variable.name} is not a plain value`);
    env[variable.name] = variable.value;
  }
  return env;
}

/** The image the kustomization deploys: `images:` rewrites the container's image name. */
function deployedImage() {
  const rule = (kustomization.images ?? []).find((i) => i.name === container.image);
  if (!rule) return container.image;
  return `${rule.newName ?? rule.name}${rule.newTag ? `:${rule.newTag}` : ''}`;
}

const quantity = (q) => String(q).replace(/Mi$/, 'm').replace(/Gi$/, 'g');
const cpus = (q) => (String(q).endsWith('m') ? Number.parseInt(q, 10) / 1000 : Number(q));

function runArgs(image, env, network) {
  const pc = pod.securityContext ?? {};
  const cc = container.securityContext ?? {};
  const args = ['run', '-d', '--name', `${id}-app`, '--network', network];
  const user = cc.runAsUser ?? pc.runAsUser;
  const group = cc.runAsGroup ?? pc.runAsGroup;
  if (user !== undefined) args.push('--user', group !== undefined ? `${user}:${group}` : `${user}`);
  if (pc.fsGroup !== undefined) args.push('--group-add', String(pc.fsGroup));
  if ((cc.runAsNonRoot ?? pc.runAsNonRoot) && (user ?? 0) === 0) fail('runAsNonRoot without a uid');
  if (cc.readOnlyRootFilesystem) args.push('--read-only');
  if (cc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  for (const cap of cc.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  for (const cap of cc.capabilities?.add ?? []) args.push('--cap-add', cap);
  if (cc.privileged) fail('privileged');
  // seccompProfile RuntimeDefault is Docker's default profile: nothing to add.
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.volumes.find((v) => v.name === mount.name) ?? fail(`volume ${mount.name}`);
    const ro = mount.readOnly ? ':ro' : '';
    if (volume.persistentVolumeClaim) {
      args.push('-v', `${id}-${volume.persistentVolumeClaim.claimName}:${mount.mountPath}${ro}`);
    } else if (volume.emptyDir) {
      const size = volume.emptyDir.sizeLimit ? `:size=${quantity(volume.emptyDir.sizeLimit)}` : '';
      args.push('--tmpfs', `${mount.mountPath}${size}`);
    } else fail(`volume ${mount.name}: only persistentVolumeClaim and emptyDir are translated`);
  }
  for (const port of container.ports ?? []) args.push('-p', `127.0.0.1::${port.containerPort}`);
  const limits = container.resources?.limits ?? {};
  if (limits.memory) args.push('--memory', quantity(limits.memory));
  if (limits.cpu) args.push('--cpus', String(cpus(limits.cpu)));
  if (pod.terminationGracePeriodSeconds !== undefined) {
    args.push('--stop-timeout', String(pod.terminationGracePeriodSeconds));
  }
  if (container.imagePullPolicy === 'IfNotPresent' || container.imagePullPolicy === 'Never') {
    args.push('--pull', 'never');
  }
  for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
  args.push(image);
  return args;
}

/** One kubelet probe: true on success (HTTP 200–399, or exec exit 0) within timeoutSeconds. */
async function probe(spec) {
  const timeout = (spec.timeoutSeconds ?? 1) * 1000;
  if (spec.httpGet) {
    const named = container.ports.find((p) => p.name === spec.httpGet.port);
    const port = named ? named.containerPort : spec.httpGet.port;
    const published = docker('port', `${id}-app`, `${port}/tcp`).split('\n')[0];
    const url = `${(spec.httpGet.scheme ?? 'HTTP').toLowerCase()}://${published}${spec.httpGet.path ?? '/'}`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeout) });
      await response.arrayBuffer();
      return { ok: response.status >= 200 && response.status < 400, status: response.status, url };
    } catch (error) {
      return { ok: false, status: error.name, url };
    }
  }
  if (spec.exec) {
    try {
      execFileSync('docker', ['exec', `${id}-app`, ...spec.exec.command], { timeout });
      return { ok: true, status: 'exit 0', url: spec.exec.command.join(' ') };
    } catch {
      return { ok: false, status: 'failed', url: spec.exec.command.join(' ') };
    }
  }
  return fail(`probe kind ${Object.keys(spec).join(',')}`);
}

/** Probes every periodSeconds until `want` (ok or not); fails after `limit` seconds. */
async function until(name, spec, want, limit) {
  const since = Date.now();
  for (;;) {
    const result = await probe(spec);
    if (result.ok === want) return { ...result, after: Math.round((Date.now() - since) / 1000) };
    if (Date.now() - since > limit * 1000) {
      fail(`${name} ${result.url} still ${result.status} after ${limit} s`);
    }
    await sleep((spec.periodSeconds ?? 10) * 1000);
  }
}

async function main() {
  const config = environment({});
  const dbHost = config.TABLEGATE_DB_HOST;
  const secrets = {
    TABLEGATE_DB_PASSWORD: `k8s-db-password-${process.pid}`,
    TABLEGATE_JWT_SECRET: `k8s-jwt-secret-${process.pid}-0123456789abcdefghij`,
  };
  const env = environment(secrets);
  const image = deployedImage();
  const tagged = (() => {
    try {
      execFileSync('docker', ['image', 'inspect', image], { stdio: 'ignore' });
      return false;
    } catch {
      docker('tag', built, image);
      return true;
    }
  })();
  docker('network', 'create', id);
  try {
    log(`image ${image} (the kustomization's name for ${container.image}); MySQL as "${dbHost}"`);
    docker(
      'run',
      '-d',
      '--name',
      `${id}-db`,
      '--network',
      id,
      '--network-alias',
      dbHost,
      '-e',
      'MYSQL_RANDOM_ROOT_PASSWORD=yes',
      '-e',
      `MYSQL_DATABASE=${env.TABLEGATE_DB_NAME}`,
      '-e',
      `MYSQL_USER=${env.TABLEGATE_DB_USER}`,
      '-e',
      `MYSQL_PASSWORD=${env.TABLEGATE_DB_PASSWORD}`,
      '--health-cmd',
      'mysqladmin ping --protocol=tcp -h 127.0.0.1 --silent',
      '--health-interval',
      '2s',
      '--health-retries',
      '90',
      'mysql:8.4',
    );
    for (
      let i = 0;
      docker('inspect', '-f', '{{.State.Health.Status}}', `${id}-db`) !== 'healthy';
      i++
    ) {
      if (i > 180) fail('MySQL did not become healthy');
      await sleep(1000);
    }
    const args = runArgs(image, env, id);
    log(
      `docker ${args
        .map((a) => (/[\s'"]/.test(a) ? `'${a}'` : a))
        .join(' ')
        .replace(/(PASSWORD|SECRET)=\S+/g, '$1=…')}`,
    );
    docker(...args);

    const { readinessProbe: ready, livenessProbe: live, startupProbe: startup } = container;
    if (!ready || !live) fail('the Deployment has no readiness or liveness probe');
    if (startup) {
      const s = await until(
        'startupProbe',
        startup,
        true,
        (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3),
      );
      log(`startupProbe ${s.url}: ${s.status} after ${s.after} s`);
    }
    // The liveness probe must not kill a pod that is merely starting.
    const liveBudget =
      (live.initialDelaySeconds ?? 0) + (live.periodSeconds ?? 10) * (live.failureThreshold ?? 3);
    const r = await until('readinessProbe', ready, true, liveBudget);
    log(
      `readinessProbe ${r.url}: ${r.status} after ${r.after} s (liveness would restart after ${liveBudget} s)`,
    );
    const l = await probe(live);
    if (!l.ok) fail(`livenessProbe ${l.url}: ${l.status}`);
    log(`livenessProbe ${l.url}: ${l.status}`);

    docker('stop', `${id}-db`);
    const down = await until('readinessProbe with MySQL down', ready, false, 30);
    log(
      `MySQL stopped: readinessProbe ${down.status} after ${down.after} s (the pod leaves the Service)`,
    );
    const liveDown = await probe(live);
    const sameEndpoint = JSON.stringify(live.httpGet) === JSON.stringify(ready.httpGet);
    log(`MySQL stopped: livenessProbe ${liveDown.url}: ${liveDown.status}`);
    if (!sameEndpoint && !liveDown.ok) fail('the liveness probe fails while only MySQL is down');
    docker('start', `${id}-db`);
    const back = await until('readinessProbe after MySQL is back', ready, true, 120);
    log(
      `MySQL started again: readinessProbe ${back.status} after ${back.after} s (tablegate reconnected)`,
    );

    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const since = Date.now();
    const preStop = container.lifecycle?.preStop;
    if (preStop?.exec) docker('exec', `${id}-app`, ...preStop.exec.command);
    else if (preStop) fail('preStop: only exec is translated');
    docker('stop', '-t', String(grace), `${id}-app`);
    const took = (Date.now() - since) / 1000;
    const code = docker('inspect', '-f', '{{.State.ExitCode}}', `${id}-app`);
    if (code !== '0') fail(`exit code ${code} after SIGTERM`);
    if (took >= grace) fail(`preStop and SIGTERM took ${took} s, over the ${grace} s grace period`);
    log(
      `preStop (${preStop?.exec?.command.join(' ') ?? 'none'}) and SIGTERM: exit code 0 after ${took.toFixed(1)} s (grace ${grace} s)`,
    );
  } catch (error) {
    for (const c of [`${id}-app`, `${id}-db`]) {
      try {
        console.error(
          `[${c}]`,
          execFileSync('docker', ['logs', '--tail', '40', c], { encoding: 'utf8', stdio: 'pipe' }),
        );
      } catch {}
    }
    throw error;
  } finally {
    for (const c of [`${id}-app`, `${id}-db`]) {
      try {
        docker('rm', '-f', '-v', c);
      } catch {}
    }
    try {
      docker('volume', 'rm', `${id}-tablegate-uploads`);
    } catch {}
    docker('network', 'rm', id);
    if (tagged) docker('rmi', image);
  }
}

// fetch's timeout timers do not keep Node alive; this does, until the check is over.
const keepAlive = setInterval(() => {}, 1000);
try {
  await main();
} finally {
  clearInterval(keepAlive);
}
