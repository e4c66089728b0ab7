/**
 * The Docker image and deployment files, checked without a Docker engine: the Dockerfile
 * (dockerfile-utils' validator and the hadolint rules that matter here), .dockerignore against the
 * Dockerfile's COPY sources, the image's entrypoint mapping (run with a stand-in `tablegate` on
 * PATH), docker-compose.yml (dclint: the Compose Specification schema and its rules), and the
 * Kubernetes manifests (kubernetes-models' JSON schemas, offline) with the properties the
 * deployment depends on. production-start.test.ts starts what the image starts;
 * scripts/test-container.sh builds it.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DCLinter } from 'dclint';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parse, parseAllDocuments } from 'yaml';
import { configFromRun } from '../../../src/cli/options.js';
import {
  DOCKERFILE_TEXT,
  envOf,
  execForm,
  productionInstall,
  REPO,
  runStage,
  STAGES,
  type Stage,
  stepsOf,
} from '../../helpers/image.js';

const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');
const UPLOADS = '/home/node/.tablegate/uploads';

/** Every TABLEGATE_* name the CLI reads, taken from its source, so a typo elsewhere is caught. */
const CLI_VARIABLES = new Set(read('src/cli/options.ts').match(/TABLEGATE_[A-Z_]+[A-Z]/g));

describe('Dockerfile', () => {
  const run = runStage();

  test('passes the dockerfile-utils validator with no error or warning', () => {
    const problems = validateDockerfile(DOCKERFILE_TEXT).map(
      (d) => `line ${d.range.start.line + 1}: ${d.message}`,
    );
    expect(problems).toEqual([]);
    // …and the validator does catch a mistake.
    const broken = DOCKERFILE_TEXT.replace('EXPOSE 8080', 'EXPOSE http');
    expect(validateDockerfile(broken).map((d) => d.message)).toEqual([
      'Invalid containerPort: http',
    ]);
  });

  test('builds in a stage with the dev dependencies and runs from the same official Node image', () => {
    expect(STAGES.map((s) => s.name)).toEqual(['build', 'run']);
    for (const stage of STAGES) expect(stage.image).toMatch(/^node:(20|22)-bookworm-slim$/);
    const [build] = STAGES as [Stage];
    const commands = stepsOf(build, 'RUN').map((s) => s.args);
    expect(commands[0]).toBe('npm ci --ignore-scripts --no-audit --no-fund');
    expect(commands).toContain('npm run build && chmod 0755 dist/cli.js');
  });

  test('builds with the classic builder too: no RUN flag, no `# syntax` frontend to pull', () => {
    // The classic builder (DOCKER_BUILDKIT=0, podman, older engines) refuses RUN --mount, and a
    // `# syntax=` line makes BuildKit pull a frontend image from a registry before building.
    const flagged = STAGES.flatMap((s) => stepsOf(s, 'RUN')).filter((s) => s.flags.length > 0);
    expect(flagged).toEqual([]);
    expect(DOCKERFILE_TEXT).not.toMatch(/^#\s*syntax\s*=/im);
  });

  test('the run stage installs production dependencies only and copies dist/ from the build', () => {
    expect(productionInstall()).toEqual([
      'npm',
      'ci',
      '--omit=dev',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
    ]);
    const copies = stepsOf(run, 'COPY');
    expect(copies).toContainEqual({
      keyword: 'COPY',
      args: '/app/dist ./dist',
      flags: ['--from=build'],
    });
    expect(copies.filter((c) => c.args.startsWith('src'))).toEqual([]);
  });

  test('no production dependency needs an install script, so --ignore-scripts skips none', () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript && !p.dev)
      .map(([name]) => name);
    expect(withScripts).toEqual([]);
  });

  test('runs as node under tini, port 8080, uploads volume, health check with node alone', () => {
    const users = stepsOf(run, 'USER').map((s) => s.args);
    expect(users.at(-1)).toBe('node');
    expect(stepsOf(run, 'EXPOSE').map((s) => s.args)).toEqual(['8080']);
    expect(envOf(run)).toMatchObject({ TABLEGATE_LISTEN_PORT: '8080', NODE_ENV: 'production' });
    expect(stepsOf(run, 'VOLUME').map((s) => execForm(s.args))).toEqual([[UPLOADS]]);
    // The volume's directory exists, owned by node, before the VOLUME line (else root owns it).
    const setup = stepsOf(run, 'RUN').find((s) => s.args.includes(`mkdir -p ${UPLOADS}`));
    expect(setup?.args).toContain('chown -R node:node /home/node/.tablegate');
    expect(execForm(stepsOf(run, 'ENTRYPOINT')[0]?.args ?? '')).toEqual([
      '/usr/bin/tini',
      '--',
      'tablegate-entrypoint',
    ]);
    expect(execForm(stepsOf(run, 'CMD')[0]?.args ?? '')).toEqual(['run']);
    const [health] = stepsOf(run, 'HEALTHCHECK');
    const command = execForm((health?.args ?? '').replace(/^CMD /, ''));
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    expect(command[2]).toContain("'/health'");
  });

  // hadolint's rules (https://github.com/hadolint/hadolint#rules) that apply to this file; hadolint
  // itself is a Haskell binary with no npm package.
  test('follows the hadolint rules that apply', () => {
    for (const stage of STAGES) {
      // DL3006, DL3007: a tagged base image, not latest.
      expect(stage.image).toMatch(/:[\w.-]+$/);
      expect(stage.image).not.toMatch(/:latest$/);
      for (const { keyword, args } of stage.steps) {
        // DL3025: CMD and ENTRYPOINT in JSON form, so signals reach the process.
        if (keyword === 'CMD' || keyword === 'ENTRYPOINT')
          expect(() => execForm(args)).not.toThrow();
        // DL3000: absolute WORKDIR. DL3004: no sudo. DL3020: COPY, not ADD.
        if (keyword === 'WORKDIR') expect(args).toMatch(/^\//);
        expect(keyword).not.toBe('ADD');
        if (keyword === 'RUN') expect(args).not.toMatch(/\bsudo\b/);
        // DL3014, DL3015, DL3009: apt-get install -y --no-install-recommends, lists removed.
        if (keyword === 'RUN' && /apt-get install/.test(args)) {
          expect(args).toMatch(/apt-get install -y --no-install-recommends/);
          expect(args).toContain('rm -rf /var/lib/apt/lists/*');
          expect(args).not.toMatch(/apt-get (dist-)?upgrade/);
        }
        // DL4006: a RUN with a pipe would need `set -o pipefail`.
        if (keyword === 'RUN') expect(args).not.toMatch(/[^|]\|[^|]/);
      }
    }
    // DL3002: the last USER is not root.
    expect(stepsOf(runStage(), 'USER').at(-1)?.args).not.toMatch(/^(root|0)(:|$)/);
  });

  test('.dockerignore lets in exactly what the Dockerfile copies from the context', () => {
    const lines = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(lines[0]).toBe('*');
    const allowed = lines.slice(1).map((l) => {
      expect(l.startsWith('!')).toBe(true);
      return l.slice(1).replace(/\/$/, '');
    });
    const copied = STAGES.flatMap((stage) =>
      stepsOf(stage, 'COPY')
        .filter((c) => !c.flags.some((f) => f.startsWith('--from')))
        .flatMap((c) => c.args.split(' ').slice(0, -1)),
    );
    expect(new Set(allowed)).toEqual(new Set(copied));
    for (const source of copied) expect(existsSync(path.join(REPO, source))).toBe(true);
  });
});

describe('docker/entrypoint.sh', () => {
  let bin: string;
  let secrets: string;

  beforeAll(() => {
    bin = mkdtempSync(path.join(os.tmpdir(), 'tablegate-entrypoint-'));
    secrets = mkdtempSync(path.join(os.tmpdir(), 'tablegate-secrets-'));
    // A stand-in for the image's /usr/local/bin/tablegate: it prints what it was given.
    const fake = path.join(bin, 'tablegate');
    writeFileSync(
      fake,
      [
        '#!/bin/sh',
        'for a in "$@"; do printf "arg:%s\\n" "$a"; done',
        "env | grep '^TABLEGATE_' | sort | sed 's/^/env:/'",
        '',
      ].join('\n'),
    );
    chmodSync(fake, 0o755);
  });
  afterAll(() => {
    rmSync(bin, { recursive: true, force: true });
    rmSync(secrets, { recursive: true, force: true });
  });

  function entrypoint(args: string[], env: Record<string, string> = {}) {
    const result = spawnSync('sh', [path.join(REPO, 'docker/entrypoint.sh'), ...args], {
      env: { PATH: `${bin}:/usr/bin:/bin`, ...env },
      encoding: 'utf8',
    });
    const lines = result.stdout.split('\n');
    return {
      status: result.status,
      stderr: result.stderr,
      stdout: result.stdout,
      args: lines.filter((l) => l.startsWith('arg:')).map((l) => l.slice(4)),
      env: lines.filter((l) => l.startsWith('env:')).map((l) => l.slice(4)),
    };
  }

  test.each([
    [[], ['run']],
    [['run'], ['run']],
    [
      ['run', 'auth', '-h', 'db', '-u', 'app', '-p', '', '-P', '3306', '-D', 'shop', '-o', '8080'],
      ['run', 'auth', '-h', 'db', '-u', 'app', '-p', '', '-P', '3306', '-D', 'shop', '-o', '8080'],
    ],
    [
      ['auth', '-h', 'db', '-D', 'shop'],
      ['run', 'auth', '-h', 'db', '-D', 'shop'],
    ],
    [
      ['-h', 'db', '--password', 'with space'],
      ['run', '-h', 'db', '--password', 'with space'],
    ],
    [['--help'], ['run', '--help']],
    [
      ['tablegate', 'run', 'auth'],
      ['run', 'auth'],
    ],
    [['demo'], ['demo']],
  ])('docker run image %j execs tablegate %j', (given, expected) => {
    const outcome = entrypoint(given);
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
    expect(outcome.args).toEqual(expected);
  });

  test('with no arguments the environment reaches tablegate unchanged', () => {
    const env = {
      TABLEGATE_AUTH: 'true',
      TABLEGATE_DB_HOST: 'db',
      TABLEGATE_DB_PASSWORD: 'p a$$ "word"',
      TABLEGATE_LISTEN_PORT: '8080',
    };
    const outcome = entrypoint([], env);
    expect(outcome.args).toEqual(['run']);
    expect(outcome.env).toEqual(Object.entries(env).map(([k, v]) => `${k}=${v}`));
  });

  test('another program of the image runs as given (docker run image sh -c …)', () => {
    const outcome = entrypoint(['sh', '-c', 'echo "shell: $0 $1"', 'a', 'b']);
    expect(outcome.stdout).toBe('shell: a b\n');
  });

  test('TABLEGATE_<NAME>_FILE is read into TABLEGATE_<NAME> (a mounted secret)', () => {
    const file = path.join(secrets, 'db-password');
    writeFileSync(file, 's3cret with spaces\n');
    const outcome = entrypoint([], { TABLEGATE_DB_PASSWORD_FILE: file, TABLEGATE_DB_USER: 'app' });
    expect(outcome.status).toBe(0);
    expect(outcome.env).toEqual([
      'TABLEGATE_DB_PASSWORD=s3cret with spaces',
      'TABLEGATE_DB_USER=app',
    ]);
  });

  test('a _FILE variable that clashes or cannot be read stops the start with one line', () => {
    const file = path.join(secrets, 'jwt');
    writeFileSync(file, 'x'.repeat(40));
    const both = entrypoint([], { TABLEGATE_JWT_SECRET: 'y', TABLEGATE_JWT_SECRET_FILE: file });
    expect(both.status).toBe(2);
    expect(both.stderr).toBe(
      'tablegate-entrypoint: both TABLEGATE_JWT_SECRET and TABLEGATE_JWT_SECRET_FILE are set; set only one\n',
    );
    const missing = entrypoint([], { TABLEGATE_JWT_SECRET_FILE: path.join(secrets, 'nope') });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(
      /^tablegate-entrypoint: TABLEGATE_JWT_SECRET_FILE: cannot read /,
    );
    expect(missing.args).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const { db, tablegate } = compose.services as Record<string, Record<string, never>>;

  function lintCompose(file: string): string[] {
    // Off: `name:` is what Compose v1 refuses (the test below).
    const rules = { 'require-project-name-field': 0 as const };
    const linter = new DCLinter({ rules, quiet: false, debug: false, exclude: [] });
    const [result] = linter.lintFiles([file], false);
    return (result?.messages ?? []).map((m) => `${m.line}: ${m.rule}: ${m.message}`);
  }

  test('passes dclint (Compose Specification schema and rules) with no error or warning', () => {
    expect(lintCompose(path.join(REPO, 'docker-compose.yml'))).toEqual([]);
  });

  test('Compose v1 reads it too: top-level keys are services and volumes only (no `name:`)', () => {
    expect(Object.keys(compose).sort()).toEqual(['services', 'volumes']);
  });

  test('the dclint check does catch a mistake', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tablegate-compose-'));
    try {
      const file = path.join(dir, 'docker-compose.yml');
      writeFileSync(file, read('docker-compose.yml').replace('service_healthy', 'service_health'));
      expect(lintCompose(file).join('\n')).toMatch(/invalid-schema/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('MySQL 8.4 with a named volume, the example schema and a TCP health check', () => {
    expect(db?.image).toBe('mysql:8.4');
    expect(db?.volumes).toEqual([
      'db-data:/var/lib/mysql',
      './docker/initdb:/docker-entrypoint-initdb.d:ro',
    ]);
    expect(compose.volumes).toHaveProperty('db-data');
    expect(db?.healthcheck).toMatchObject({
      test: ['CMD', 'mysqladmin', 'ping', '--protocol=tcp', '-h', '127.0.0.1', '--silent'],
    });
    expect(readdirSync(path.join(REPO, 'docker/initdb'))).toEqual([
      '01-example.sql',
      '02-change-feed.sql',
    ]);
  });

  // test/integration/compose-feed.test.ts starts a server with these and serves the feed.
  test('MySQL with the binary log as the change feed needs it, and GTIDs', () => {
    expect(db?.command).toEqual([
      '--log-bin=binlog',
      '--binlog-format=ROW',
      '--binlog-row-image=FULL',
      '--server-id=1',
      '--loose-gtid-mode=ON',
      '--loose-enforce-gtid-consistency=ON',
    ]);
    expect(read('docker/initdb/02-change-feed.sql')).toContain(
      "\nGRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'tablegate'@'%';\n",
    );
    const environment = db?.environment as unknown as Record<string, string>;
    expect(environment.MYSQL_USER).toBe('tablegate');
  });

  test('tablegate: built here, waits for a healthy MySQL, auth mode, uploads on a volume', () => {
    expect(tablegate?.build).toBe('.');
    expect(tablegate?.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(tablegate?.volumes).toEqual([`uploads:${UPLOADS}`]);
    expect(compose.volumes).toHaveProperty('uploads');
    // The host port is TABLEGATE_HOST_PORT of .env, 8080 when unset (README, Run with Docker).
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's interpolation, not JS's
    expect(tablegate?.ports).toEqual(['127.0.0.1:${TABLEGATE_HOST_PORT:-8080}:8080']);
    const environment = tablegate?.environment as unknown as Record<string, string>;
    expect(environment).toMatchObject({
      TABLEGATE_AUTH: 'true',
      TABLEGATE_DB_HOST: 'db',
      TABLEGATE_LISTEN_PORT: '8080',
      TABLEGATE_CHANGE_FEED: 'auto',
    });
    // The secrets come from .env, never from this file.
    expect(environment.TABLEGATE_DB_PASSWORD).toMatch(/^\$\{TABLEGATE_DB_PASSWORD:\?/);
    expect(environment.TABLEGATE_JWT_SECRET).toMatch(/^\$\{TABLEGATE_JWT_SECRET:\?/);
    for (const name of Object.keys(environment)) expect(CLI_VARIABLES).toContain(name);
  });

  test('.env.example sets every variable the compose file needs; .env is git-ignored', () => {
    const example = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((l) => /^\w+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const needed = new Set([...read('docker-compose.yml').matchAll(/\$\{(\w+)/g)].map((m) => m[1]));
    expect(new Set(Object.keys(example))).toEqual(needed);
    expect(Buffer.byteLength(example.TABLEGATE_JWT_SECRET ?? '')).toBeGreaterThanOrEqual(32);
    expect(read('.gitignore').split('\n')).toContain('.env');
  });
});

describe('deploy/ (Kubernetes)', () => {
  type Manifest = {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    [key: string]: unknown;
  };
  const kustomization = parse(read('deploy/kustomization.yaml')) as {
    namespace: string;
    resources: string[];
    images: { name: string; newName?: string; newTag?: string }[];
  };
  const manifests: Manifest[] = kustomization.resources.flatMap((file) =>
    parseAllDocuments(read(path.join('deploy', file))).map((document) => {
      expect(document.errors).toEqual([]);
      return document.toJS() as Manifest;
    }),
  );
  const byKind = (kind: string) => {
    const found = manifests.filter((m) => m.kind === kind);
    expect(found).toHaveLength(1);
    return found[0] as never;
  };
  const MODELS: Record<string, new (data: never) => { validate(): void }> = {
    'v1/Namespace': Namespace,
    'v1/ConfigMap': ConfigMap,
    'v1/Secret': Secret,
    'v1/Service': Service,
    'v1/PersistentVolumeClaim': PersistentVolumeClaim,
    'apps/v1/Deployment': Deployment,
    'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  };

  test('kustomization.yaml lists every manifest in deploy/, and each exists', () => {
    const files = readdirSync(path.join(REPO, 'deploy')).filter(
      (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(kustomization.namespace).toBe('tablegate');
    expect(byKind('Namespace')).toMatchObject({ metadata: { name: 'tablegate' } });
  });

  test('every manifest validates against the Kubernetes JSON schema (kubernetes-models)', () => {
    for (const manifest of manifests) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model).toBeDefined();
      expect(() =>
        new (Model as NonNullable<typeof Model>)(manifest as never).validate(),
      ).not.toThrow();
    }
  });

  test('the schema check does catch a mistake', () => {
    const deployment = structuredClone(byKind('Deployment')) as { spec: { replicas: unknown } };
    deployment.spec.replicas = 'two';
    expect(() => new Deployment(deployment as never).validate()).toThrow(
      /replicas must be integer/,
    );
  });

  // The schemas allow unknown fields (as kubeconform does without -strict), so a misspelt key
  // would pass them: the settings this deployment depends on are checked by exact path here.
  test('Deployment: 2 replicas, probes on /health and /live, resources, non-root, read-only root', () => {
    const deployment = byKind('Deployment') as {
      spec: {
        replicas: number;
        selector: { matchLabels: Record<string, string> };
        template: never;
      };
    };
    expect(deployment.spec.replicas).toBe(2);
    const pod = (deployment.spec.template as { metadata: never; spec: Record<string, never> }).spec;
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const containers = pod.containers as unknown as Record<string, never>[];
    expect(containers).toHaveLength(1);
    const [container] = containers as [Record<string, never>];
    const image = kustomization.images.find((i) => i.name === container.image);
    expect(image?.newTag).toMatch(/^\d+\.\d+\.\d+/);
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    // Prometheus finds each pod's metrics port by the usual annotations (docs/operations.md).
    const template = deployment.spec.template as { metadata: { annotations?: object } };
    expect(template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    });
    // Readiness asks MySQL; liveness does not, so an outage never restarts a pod.
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/health', port: 'http' } });
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/live', port: 'http' } });
    expect(container.resources).toMatchObject({
      requests: { cpu: expect.any(String), memory: expect.any(String) },
      limits: { cpu: expect.any(String), memory: expect.any(String) },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.volumeMounts).toEqual([
      { name: 'uploads', mountPath: UPLOADS },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    const pvc = byKind('PersistentVolumeClaim') as { metadata: { name: string }; spec: never };
    expect(pod.volumes).toEqual([
      { name: 'uploads', persistentVolumeClaim: { claimName: pvc.metadata.name } },
      { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
    ]);
    // Two replicas serve each other's uploads.
    expect((pvc.spec as { accessModes: string[] }).accessModes).toEqual(['ReadWriteMany']);
    // Its configuration comes from the ConfigMap and the Secret of this directory.
    const configMap = byKind('ConfigMap') as { metadata: { name: string } };
    const secret = byKind('Secret') as { metadata: { name: string } };
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata.name } },
      { secretRef: { name: secret.metadata.name } },
    ]);
  });

  test('Service and PodDisruptionBudget select the pods; the Service reaches the http port', () => {
    const deployment = byKind('Deployment') as {
      spec: {
        selector: { matchLabels: Record<string, string> };
        template: { metadata: { labels: object } };
      };
    };
    const labels = deployment.spec.template.metadata.labels;
    expect(labels).toMatchObject(deployment.spec.selector.matchLabels);
    const service = byKind('Service') as {
      spec: { selector: object; ports: { targetPort: string }[] };
    };
    expect(labels).toMatchObject(service.spec.selector);
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http']);
    const budget = byKind('PodDisruptionBudget') as { spec: { selector: { matchLabels: object } } };
    expect(labels).toMatchObject(budget.spec.selector.matchLabels);
  });

  test('ConfigMap and Secret make a configuration the CLI accepts, in auth mode', () => {
    const data = (byKind('ConfigMap') as { data: Record<string, string> }).data;
    const secrets = (byKind('Secret') as { stringData: Record<string, string> }).stringData;
    expect(Object.keys(secrets).sort()).toEqual(['TABLEGATE_DB_PASSWORD', 'TABLEGATE_JWT_SECRET']);
    for (const name of [...Object.keys(data), ...Object.keys(secrets)]) {
      expect(CLI_VARIABLES).toContain(name);
    }
    // The placeholder is too short to be a JWT secret: nobody runs with a published one.
    expect(Buffer.byteLength(secrets.TABLEGATE_JWT_SECRET ?? '')).toBeLessThan(32);
    const config = configFromRun(
      [],
      {},
      { ...data, ...secrets, TABLEGATE_JWT_SECRET: 'a'.repeat(32) },
    );
    expect(config).toMatchObject({
      mode: 'auth',
      listenPort: 8080,
      db: { host: data.TABLEGATE_DB_HOST, port: 3306, database: data.TABLEGATE_DB_NAME },
    });
    expect(config.db.poolSize).toBe(Number(data.TABLEGATE_POOL_SIZE));
    expect(config.trustProxy).toBe(Number(data.TABLEGATE_TRUST_PROXY));
    // Metrics on the port the pod annotations name, reachable from Prometheus in the cluster.
    expect(config).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0' });
    // The change feed as the ConfigMap's note on grants describes it (docs/changes.md).
    expect(config.changeFeed).toBe('auto');
  });

  test("systemd's environment file is a configuration the CLI accepts, the feed on auto", () => {
    const env = Object.fromEntries(
      read('deploy/systemd/tablegate.env.example')
        .split('\n')
        .filter((line) => /^TABLEGATE_\w+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    for (const name of Object.keys(env)) expect(CLI_VARIABLES).toContain(name);
    // As tablegate.service's ExecStart runs it: `tablegate run auth`.
    expect(read('deploy/systemd/tablegate.service')).toContain(
      '\nExecStart=/usr/local/bin/tablegate run auth\n',
    );
    expect(configFromRun(['auth'], {}, env).changeFeed).toBe('auto');
  });
});
