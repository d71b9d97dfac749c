// Version 1 of the webhook protocol as JSON Schema (draft-07): the request node-address-ccm POSTs
// for each batch of nodes, and the answer it accepts. These objects are the source; the copies
// published in docs/webhook/ are checked against them by the tests, and a new version gets new
// files rather than a changed meaning.
import { NODE_ADDRESS_TYPES } from '../../src/model/node-address.js';

export const WEBHOOK_API_VERSION = 'webhook.node-address-ccm.io/v1';

const labels = {
  type: 'object',
  maxProperties: 64,
  propertyNames: { type: 'string', minLength: 1, maxLength: 317 },
  additionalProperties: { type: 'string', maxLength: 63 },
} as const;

export const REQUEST_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://node-address-ccm.io/webhook/v1/instances-request.schema.json',
  title: 'InstancesRequest: one batch of nodes node-address-ccm asks about',
  type: 'object',
  required: ['apiVersion', 'kind', 'nodes'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: WEBHOOK_API_VERSION },
    kind: { const: 'InstancesRequest' },
    nodes: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 253, description: 'metadata.name of the Node' },
          providerID: { type: 'string', minLength: 1, description: 'spec.providerID, absent until the node is initialised' },
          labels: { ...labels, description: 'metadata.labels of the Node' },
        },
      },
    },
  },
} as const;

export const RESPONSE_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://node-address-ccm.io/webhook/v1/instances-response.schema.json',
  title: 'InstancesResponse: per node asked about, exactly one of found, notFound or error',
  type: 'object',
  required: ['apiVersion', 'kind', 'nodes'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: WEBHOOK_API_VERSION },
    kind: { const: 'InstancesResponse' },
    nodes: {
      type: 'object',
      description: 'keyed by node name; a node asked about but left out waits (an error), a node not asked about is ignored',
      additionalProperties: { $ref: '#/definitions/outcome' },
    },
  },
  definitions: {
    outcome: {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
      properties: {
        found: { $ref: '#/definitions/instance' },
        notFound: {
          type: 'object',
          additionalProperties: false,
          description: 'the instance definitely does not exist (deleted, terminated): cloud-node-lifecycle deletes its Node',
          properties: { reason: { type: 'string', maxLength: 1024 } },
        },
        error: {
          type: 'object',
          required: ['message'],
          additionalProperties: false,
          description: 'no answer for this node now; asked again later',
          properties: { message: { type: 'string', maxLength: 1024 } },
        },
      },
    },
    instance: {
      type: 'object',
      required: ['providerID', 'addresses'],
      additionalProperties: false,
      properties: {
        providerID: { type: 'string', maxLength: 1024 },
        addresses: {
          type: 'array',
          maxItems: 64,
          description: "in the inventory's order of preference",
          items: {
            type: 'object',
            required: ['type', 'address'],
            additionalProperties: false,
            properties: {
              type: { enum: [...NODE_ADDRESS_TYPES] },
              address: { type: 'string', minLength: 1, maxLength: 253 },
            },
          },
        },
        zone: { type: 'string', maxLength: 63 },
        region: { type: 'string', maxLength: 63 },
        instanceType: { type: 'string', maxLength: 63 },
        podCIDRs: { type: 'array', maxItems: 2, items: { type: 'string', maxLength: 43 }, description: 'CloudAllocator: network CIDRs, at most one per family' },
        labels: { ...labels, description: 'added to the Node, never overwriting; keys in kubernetes.io and k8s.io are dropped' },
        shutdown: { type: 'boolean', description: 'powered off but not gone (cloud-node-lifecycle taints the not-Ready Node)' },
      },
    },
  },
} as const;
