import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The subset of kustomize that deploy/k8s uses, rendered in-process so CI validates what
 * `kubectl apply -k` would apply (no maintained kustomize renderer exists on npm:
 * docs/decisions/kustomize-in-tests.md). A kustomization field outside this subset throws, so an
 * overlay cannot silently rely on something the test does not render.
 */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  labels?: Array<{ pairs: Record<string, string>; includeTemplates?: boolean; includeSelectors?: boolean }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  patches?: Array<{ path?: string; patch?: string; target?: { kind?: string; name?: string } }>;
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'labels', 'images', 'replicas', 'patches']);

export function renderKustomization(directory: string): Manifest[] {
  const kustomization = parse(readFileSync(join(directory, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length > 0)
    throw new Error(`${directory}: unsupported kustomization fields ${unsupported}`);
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(directory, resource);
    manifests.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readManifests(path)));
  }
  for (const patch of kustomization.patches ?? []) manifests = applyPatch(directory, manifests, patch);
  for (const { name, count } of kustomization.replicas ?? []) {
    const target = manifests.find(
      (manifest) => manifest.kind === 'Deployment' && manifest.metadata.name === name,
    );
    if (!target) throw new Error(`${directory}: replicas for unknown Deployment ${name}`);
    (target.spec as Record<string, unknown>).replicas = count;
  }
  for (const image of kustomization.images ?? []) for (const manifest of manifests) setImage(manifest, image);
  for (const label of kustomization.labels ?? []) {
    if (label.includeSelectors) throw new Error(`${directory}: includeSelectors is not rendered`);
    for (const manifest of manifests) {
      manifest.metadata.labels = { ...manifest.metadata.labels, ...label.pairs };
      const template = podTemplate(manifest);
      if (label.includeTemplates && template) {
        const metadata = (template.metadata ?? {}) as { labels?: Record<string, string> };
        metadata.labels = { ...metadata.labels, ...label.pairs };
        template.metadata = metadata;
      }
    }
  }
  return manifests;
}

function readManifests(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

function applyPatch(
  directory: string,
  manifests: Manifest[],
  patch: NonNullable<Kustomization['patches']>[number],
) {
  if (patch.path) {
    for (const overlay of readManifests(join(directory, patch.path))) {
      const index = manifests.findIndex(
        (manifest) => manifest.kind === overlay.kind && manifest.metadata.name === overlay.metadata.name,
      );
      if (index < 0) throw new Error(`${patch.path}: no ${overlay.kind} ${overlay.metadata.name} to patch`);
      manifests[index] = strategicMerge(manifests[index], overlay) as Manifest;
    }
    return manifests;
  }
  if (!patch.patch || !patch.target)
    throw new Error(`${directory}: a patch needs a path, or a target and ops`);
  const operations = parse(patch.patch) as Array<{ op: string; path: string; value: unknown }>;
  const targets = manifests.filter(
    (manifest) =>
      (!patch.target!.kind || manifest.kind === patch.target!.kind) &&
      (!patch.target!.name || manifest.metadata.name === patch.target!.name),
  );
  if (targets.length === 0)
    throw new Error(`${directory}: patch target ${JSON.stringify(patch.target)} matches nothing`);
  for (const target of targets) for (const operation of operations) applyJsonPatch(target, operation);
  return manifests;
}

/** JSON 6902 `replace` and `add` (the operations the overlays use). */
function applyJsonPatch(target: Manifest, operation: { op: string; path: string; value: unknown }): void {
  if (operation.op !== 'replace' && operation.op !== 'add')
    throw new Error(`unsupported patch op ${operation.op}`);
  const keys = operation.path
    .split('/')
    .slice(1)
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node = target as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (operation.op === 'replace' && !(last in node)) throw new Error(`replace of missing ${operation.path}`);
  node[last] = operation.value;
}

/**
 * Strategic merge as kustomize does it for the fields used here: maps merge, lists of named
 * items (containers, env, ports, volumes) merge by name, other lists are replaced.
 */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch) && [...base, ...patch].every(isNamed)) {
    const merged = base.map((item) => {
      const match = patch.find((candidate) => candidate.name === item.name);
      return match ? strategicMerge(item, match) : item;
    });
    return [...merged, ...patch.filter((item) => !base.some((existing) => existing.name === item.name))];
  }
  if (isObject(base) && isObject(patch)) {
    const merged: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(patch))
      merged[key] = key in base ? strategicMerge(base[key], value) : value;
    return merged;
  }
  return patch;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNamed(value: unknown): value is { name: string } {
  return isObject(value) && typeof value.name === 'string';
}

function podTemplate(manifest: Manifest): Record<string, unknown> | undefined {
  const spec = manifest.spec as { template?: Record<string, unknown> } | undefined;
  return manifest.kind === 'Deployment' || manifest.kind === 'Job' ? spec?.template : undefined;
}

function setImage(manifest: Manifest, image: { name: string; newName?: string; newTag?: string }): void {
  const podSpec = podTemplate(manifest)?.spec as
    | { containers?: Array<{ image: string }>; initContainers?: Array<{ image: string }> }
    | undefined;
  for (const container of [...(podSpec?.containers ?? []), ...(podSpec?.initContainers ?? [])]) {
    const [name] = container.image.split(':');
    if (name !== image.name) continue;
    container.image = `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
  }
}
