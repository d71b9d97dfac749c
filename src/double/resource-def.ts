// What a served resource is: the object shape, the row describing a resource, and the hooks a
// row carries. Below the table (resources.ts), the store and the per-kind files, so none of them
// imports another to learn these shapes.
import type { FieldError } from './errors.js';
import type { SmpSchema } from './patch.js';

/** Reads a selectable field of an object as its string value (field selectors compare strings). */
export type FieldReader = (obj: KObject, field: string) => string;

/** The part of the store an action subresource uses. */
export interface ActionStore {
  deleteRef(ref: string, name: string, namespace?: string, options?: { preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: boolean }): unknown;
}

export type KObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [k: string]: unknown;
};

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Served with a /status subresource that alone may change `.status`. */
  status: boolean;
  /** A custom resource (served by apiextensions): no strategic merge patch, generation kept. */
  custom: boolean;
  /** Whether a create may carry status (kubelet registers Nodes with status). */
  keepStatusOnCreate: boolean;
  /** Whether metadata.generation is maintained (bumped on spec changes). */
  generation: boolean;
  /** Whether PUT on a missing object creates it. */
  createOnUpdate: boolean;
  shortNames: string[];
  /** Field selectors beyond metadata.name / metadata.namespace. */
  fieldSelectors: string[];
  smp: SmpSchema;
  /** Returns field errors for a create (old undefined) or an update. */
  validate?: (obj: KObject, old: KObject | undefined) => FieldError[];
  /** Another resource stored together with this one: every write shows up there, converted. */
  mirror?: { resource: string; convert: (obj: KObject) => KObject };
  /** Normalises every create and main-resource update (e.g. podCIDR from podCIDRs). May mutate. */
  prepare?: (obj: KObject) => void;
  /**
   * Puts a stored object in the shape kube-apiserver's Go types give it on every write: struct
   * fields present even when empty (Go's omitempty skips no struct), empty omitempty fields gone,
   * and the defaulting that runs on every decode. May replace, never mutate, nested objects.
   */
  encodeAsGo?: (obj: KObject) => void;
  /** Fills defaults on create, as kube-apiserver's defaulting and PrepareForCreate do. */
  defaults?: (obj: KObject) => void;
  /** Reads a selectable field, for kinds where some are not plain paths (default: the dotted path). */
  fieldValue?: FieldReader;
  /** Create-only subresources beyond status (POST …/<name>/<subresource>), e.g. pods/eviction. */
  actions: readonly ActionSubresource[];
  /** Whether DELETE answers the deleted object rather than a Success Status (pods do). */
  returnDeletedObject: boolean;
  /** Discovery categories (`kubectl get all`). */
  categories: string[];
}

/** What an action subresource's handler gets: the store, the addressed object, the body, dryRun. */
export interface ActionRequest {
  /** The store's delete, as far as an action needs it (pods/eviction deletes the pod). */
  store: ActionStore;
  namespace: string;
  name: string;
  body: unknown;
  /** dryRun=All in the query. */
  dryRun: boolean;
}

/** A create-only subresource with its own kind (discovered under the parent resource's group-version). */
export interface ActionSubresource {
  name: string;
  group: string;
  version: string;
  kind: string;
  /** Handles a POST; returns the status code and body. */
  create: (req: ActionRequest) => [number, object];
}

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
