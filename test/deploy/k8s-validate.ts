import type { Manifest } from './kustomize.ts';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

// The typed models of the Kubernetes API (kubernetes-models) and of KEDA's CRDs
// (@kubernetes-models/keda, generated from the CRD's openAPIV3Schema): each validates with the
// JSON schema of its kind.
async function modelsFor(apiVersion: string): Promise<Record<string, ModelClass>> {
  if (apiVersion === 'keda.sh/v1alpha1')
    return (await import('@kubernetes-models/keda/keda.sh/v1alpha1')) as never;
  return (await import(`kubernetes-models/${apiVersion}`)) as never;
}

/** Throws with the kind, name and schema error of the first manifest that is not valid. */
export async function validateManifest(manifest: Manifest): Promise<void> {
  const models = await modelsFor(manifest.apiVersion);
  const Kind = models[manifest.kind];
  if (!Kind) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`);
  try {
    new Kind(manifest).validate();
  } catch (error) {
    throw new Error(`${manifest.kind} ${manifest.metadata.name}: ${(error as Error).message}`);
  }
}
