/**
 * The rendered Job and ConfigMap: equal to the golden file, valid against the Kubernetes JSON Schemas
 * (strict: unknown fields rejected; vendored in test/k8s/schemas, see its README), carrying every field
 * the run's failure handling depends on, and parsed by `kubectl apply --dry-run=client`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { ERROR_CODES, isH2labError } from '../../src/core/index.ts';
import { renderManifests, renderYaml } from '../../src/k8s/index.ts';
import { planCompareShards, planShards } from '../../src/shard/index.ts';

const here = import.meta.dirname;
const schema = (name: string) =>
  z.fromJSONSchema(JSON.parse(readFileSync(join(here, 'schemas', name), 'utf8')));

/** The fields of the rendered Job this test reads. */
interface JobFields {
  metadata: { labels: Record<string, string> };
  spec: Record<string, unknown> & {
    podFailurePolicy: { rules: unknown[] };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { restartPolicy: string; containers: Array<{ image: string }> };
    };
  };
}

/** A plan and its manifests, fixed in time so the golden file holds. */
function fixture() {
  const plan = planShards(
    { url: 'https://target.example/bytes/1024', protocol: 'h2', rateRps: 3000, durationMs: 30_000, seed: 5 },
    {
      shards: 4,
      startAtEpochMs: Date.UTC(2026, 11, 1, 15, 0, 0),
      runId: 'golden',
      clockUrl: 'http://h2lab-clock:7070/',
    },
  );
  const objects = renderManifests(plan, {
    image: 'registry.example/h2lab:0.1.0',
    nowEpochMs: Date.UTC(2026, 11, 1, 14, 58, 0),
  });
  return { plan, objects, yaml: renderYaml(objects) };
}

test('the manifests equal the golden file (H2LAB_UPDATE_GOLDEN=1 rewrites it)', () => {
  const { yaml } = fixture();
  const golden = join(here, 'golden', 'indexed-job.yaml');
  if (process.env.H2LAB_UPDATE_GOLDEN === '1') writeFileSync(golden, yaml);
  assert.equal(yaml, readFileSync(golden, 'utf8'));
});

test('valid against the Kubernetes JSON Schemas (strict), with the fields the run depends on', () => {
  const { plan, yaml } = fixture();
  const [cm, job] = parseAllDocuments(yaml).map((d) => d.toJS()) as [Record<string, unknown>, JobFields];
  const jobSchema = schema('job-batch-v1.json');
  const cmSchema = schema('configmap-v1.json');
  const j = jobSchema.safeParse(job);
  assert.ok(j.success, JSON.stringify(j.error?.issues.slice(0, 3)));
  const c = cmSchema.safeParse(cm);
  assert.ok(c.success, JSON.stringify(c.error?.issues.slice(0, 3)));
  // The schema is strict: a misspelt field is refused, so the check above is not vacuous.
  const typo = structuredClone(job);
  typo.spec.backoffLimitPerIndx = 0;
  assert.equal(jobSchema.safeParse(typo).success, false);
  const s = job.spec;
  assert.equal(s.completionMode, 'Indexed');
  assert.equal(s.completions, 4);
  assert.equal(s.parallelism, 4);
  assert.equal(s.backoffLimitPerIndex, 0);
  assert.equal(s.podReplacementPolicy, 'Failed');
  assert.equal(s.template.spec.restartPolicy, 'Never');
  assert.deepEqual(s.podFailurePolicy.rules[0], {
    action: 'FailJob',
    onExitCodes: {
      containerName: 'shard',
      operator: 'In',
      values: [ERROR_CODES.H2LAB_ERR_SHARD_MISSED_START.exit],
    },
  });
  assert.equal(s.activeDeadlineSeconds, 120 + 30 + 300, 'until the start, the run, a margin');
  assert.equal(s.ttlSecondsAfterFinished, 3600);
  assert.equal(job.metadata.labels['h2lab.dev/run-id'], 'golden');
  assert.equal(s.template.metadata.labels['h2lab.dev/run-id'], 'golden');
  assert.equal(s.template.spec.containers[0]?.image, 'registry.example/h2lab:0.1.0');
  assert.deepEqual(JSON.parse((cm as { data: Record<string, string> }).data['plan.json']!), plan);
});

test('a comparison’s plan renders the same Job, its deadline covering every slot; an oversized plan is refused', () => {
  const now = Date.UTC(2026, 11, 1, 14, 58, 0);
  const plan = planCompareShards(
    { url: 'https://target.example/', concurrency: [8, 64], runs: 5, durationMs: 10_000 },
    { shards: 4, startAtEpochMs: now + 120_000, runId: 'cmp', clockUrl: 'http://h2lab-clock:7070/' },
  );
  const [cm, job] = renderManifests(plan, {
    image: 'registry.example/h2lab:0.1.0',
    nowEpochMs: now,
  }) as unknown as [Record<string, unknown>, JobFields];
  assert.ok(schema('job-batch-v1.json').safeParse(job).success);
  assert.ok(schema('configmap-v1.json').safeParse(cm).success);
  // 2 levels × 3 strategies × 5 rounds = 30 slots of 11 s each.
  assert.equal(plan.slots.length, 30);
  assert.equal(job.spec.activeDeadlineSeconds, 120 + 30 * 11 + 300);
  assert.equal(job.spec.completions, 4);
  assert.deepEqual(JSON.parse((cm as { data: Record<string, string> }).data['plan.json']!), plan);
  // Many shards of a load run: one set of options each, past what a ConfigMap holds.
  const big = planShards(
    { url: 'https://target.example/', protocol: 'h2', rateRps: 100_000, durationMs: 10_000 },
    { shards: 8000, startAtEpochMs: now + 120_000 },
  );
  try {
    renderManifests(big, { image: 'registry.example/h2lab:0.1.0', nowEpochMs: now });
    assert.fail('rendered');
  } catch (err) {
    assert.ok(isH2labError(err) && err.code === 'H2LAB_ERR_PLAN_TOO_LARGE', String(err));
    assert.match(err.message, /MiB, more than the 1 MiB a ConfigMap holds: plan fewer shards$/);
  }
});

/**
 * kubectl's client-side dry run still asks the API server two things: discovery (which kinds exist)
 * and whether each object exists already (to create or patch it). This answers both, with what a
 * server that has no such objects answers; it creates nothing and accepts no write.
 */
async function discoveryOnly(): Promise<{ url: string; writes: string[]; close(): Promise<void> }> {
  const writes: string[] = [];
  const lists: Record<string, unknown> = {
    '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] },
    '/apis': {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'batch',
          versions: [{ groupVersion: 'batch/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'batch/v1', version: 'v1' },
        },
      ],
    },
    '/api/v1': {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        {
          name: 'configmaps',
          singularName: 'configmap',
          namespaced: true,
          kind: 'ConfigMap',
          verbs: ['create', 'get', 'patch', 'delete'],
        },
      ],
    },
    '/apis/batch/v1': {
      kind: 'APIResourceList',
      groupVersion: 'batch/v1',
      resources: [
        {
          name: 'jobs',
          singularName: 'job',
          namespaced: true,
          kind: 'Job',
          verbs: ['create', 'get', 'patch', 'delete'],
        },
      ],
    },
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET') writes.push(`${req.method} ${path}`);
    const body = lists[path];
    if (req.method === 'GET' && body) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('kubectl apply --dry-run=client --validate=false parses them', async (t) => {
  if (spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0) {
    t.skip('kubectl is not installed (Debian: apt-get install kubernetes-client; .ci/run installs it)');
    return;
  }
  const api = await discoveryOnly();
  const dir = mkdtempSync(join(tmpdir(), 'h2lab-k8s-'));
  try {
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster: {server: "${api.url}"}\ncontexts:\n- name: none\n  context: {cluster: none, user: none, namespace: default}\ncurrent-context: none\nusers:\n- name: none\n  user: {token: none}\n`,
    );
    const file = join(dir, 'run.yaml');
    writeFileSync(file, fixture().yaml);
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('kubectl', ['apply', '--dry-run=client', '--validate=false', '-f', file], {
        env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (status: number | null) => resolve({ status, stdout, stderr }));
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /configmap\/h2lab-golden created \(dry run\)/);
    assert.match(r.stdout, /job\.batch\/h2lab-golden created \(dry run\)/);
    assert.deepEqual(api.writes, [], 'a client-side dry run writes nothing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await api.close();
  }
});
