import type { AttemptView as WebhookAttempt, DeliveryView as WebhookDelivery } from '../../../domain/webhookDelivery';
import type { WebhookEndpointView, WebhookTargetRule } from '../../../domain/webhookEndpoints';
import type { WebhookEventType } from '../../../domain/webhooks';
import { api } from './client';

export type { WebhookEndpointView, WebhookTargetRule };

/** One event sent to one endpoint, and one attempt of it, as the server answers them. */
export type { WebhookAttempt, WebhookDelivery };

export interface EndpointInput {
  url: string;
  description: string;
  eventTypes: WebhookEventType[];
}

const path = (workspaceId: string, ...rest: string[]) => ['workspaces', encodeURIComponent(workspaceId), 'webhooks', ...rest.map(encodeURIComponent)].join('/');

/** The workspace's endpoints, and which URLs this server sends to (the form's hint says it). */
export async function fetchEndpoints(workspaceId: string): Promise<{ endpoints: WebhookEndpointView[]; targetRule: WebhookTargetRule }> {
  const body = await api.get(path(workspaceId)).json<{ success: true; endpoints: WebhookEndpointView[]; targetRule: WebhookTargetRule }>();
  return { endpoints: body.endpoints, targetRule: body.targetRule };
}

/** Registers an endpoint; the secret is answered this once. */
export async function createEndpoint(workspaceId: string, input: EndpointInput): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  return api.post(path(workspaceId), { json: input }).json<{ success: true; endpoint: WebhookEndpointView; secret: string }>();
}

export async function updateEndpoint(workspaceId: string, endpointId: string, changes: Partial<EndpointInput> & { enabled?: boolean }): Promise<WebhookEndpointView> {
  const body = await api.patch(path(workspaceId, endpointId), { json: changes }).json<{ success: true; endpoint: WebhookEndpointView }>();
  return body.endpoint;
}

export async function deleteEndpoint(workspaceId: string, endpointId: string): Promise<void> {
  await api.delete(path(workspaceId, endpointId));
}

export async function rotateEndpointSecret(workspaceId: string, endpointId: string): Promise<{ secret: string; previousSecretExpiresAt: string }> {
  return api.post(path(workspaceId, endpointId, 'rotate-secret')).json<{ success: true; secret: string; previousSecretExpiresAt: string }>();
}

export async function fetchDeliveries(workspaceId: string, endpointId: string, cursor?: string | null): Promise<{ deliveries: WebhookDelivery[]; nextCursor: string | null }> {
  const searchParams = cursor ? { cursor } : undefined;
  return api.get(path(workspaceId, endpointId, 'deliveries'), { searchParams }).json<{ success: true; deliveries: WebhookDelivery[]; nextCursor: string | null }>();
}

export async function fetchDelivery(workspaceId: string, endpointId: string, deliveryId: string): Promise<{ delivery: WebhookDelivery; attempts: WebhookAttempt[] }> {
  return api.get(path(workspaceId, endpointId, 'deliveries', deliveryId)).json<{ success: true; delivery: WebhookDelivery; attempts: WebhookAttempt[] }>();
}

/** "Send again": a new delivery of the same event (same webhook-id). */
export async function redeliver(workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const body = await api.post(path(workspaceId, endpointId, 'deliveries', deliveryId, 'redeliver')).json<{ success: true; delivery: WebhookDelivery }>();
  return body.delivery;
}

export async function sendTestEvent(workspaceId: string, endpointId: string): Promise<WebhookDelivery> {
  const body = await api.post(path(workspaceId, endpointId, 'test')).json<{ success: true; delivery: WebhookDelivery }>();
  return body.delivery;
}
