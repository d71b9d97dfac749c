// A Kubernetes API server double with kube-apiserver's semantics and fault injection.
// See docs/apiserver-double.md for what it serves and where it differs.
export { startApiServerDouble, ApiServer } from './server.js';
export type { ApiServerDouble, ApiServerDoubleOptions, UserSpec } from './server.js';
export { kubeConfigFor } from './client.js';
export { Store } from './store.js';
export type { Resource, ListOptions, UpdateOptions, DeleteOptions, DeleteResult, StoreOptions } from './store.js';
export { DEFAULT_RESOURCES, CLUSTERCIDR_RULE_MESSAGES } from './resources.js';
export { apiVersionOf } from './resource-def.js';
export type { KObject, ObjectMeta, ResourceDef } from './resource-def.js';
export { Faults, Counters, VERBS } from './faults.js';
export type { FaultSpec, FaultHandle, FaultStatus, CounterRow, DetailedCounterRow, CounterFilter, RequestInfo, Verb } from './faults.js';
export { ApiError } from './errors.js';
export type { StatusBody, StatusReason, FieldError } from './errors.js';
export { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, METADATA_SMP } from './patch.js';
export type { SmpSchema, ListStrategy, Json } from './patch.js';
export { parseLabelSelector, matchesLabels, parseFieldSelector, matchesFields } from './selectors.js';
export type { LabelRequirement, FieldRequirement } from './selectors.js';
export { loadRbacDir, parseRbacYaml, Authorizer, BOOTSTRAP_CLUSTER_ROLES, withBootstrapRoles } from './rbac.js';
export { reviewAccess, reviewEndpoint, tokenReview, subjectAccessReview, TOKEN_REVIEWS, SUBJECT_ACCESS_REVIEWS } from './reviews.js';
export type { RbacPolicy, Role, Binding, Subject, PolicyRule, UserInfo } from './rbac.js';
