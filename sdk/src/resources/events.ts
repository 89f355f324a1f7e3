// Events: what happened to the account in the credential's mode, newest first, kept 30 days.
import { everyItem } from '../pages.ts';
import type { Transport } from '../transport.ts';
import type { Event, ListEventsParams, Page } from '../types.ts';

export class Events {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** One page, newest first; `type` keeps one kind. */
  list(params: ListEventsParams = {}): Promise<Page<Event>> {
    return this.transport.json({ method: 'GET', path: '/v1/events', query: params });
  }

  listAll(params: Omit<ListEventsParams, 'cursor'> = {}): AsyncGenerator<Event, void, undefined> {
    return everyItem((cursor) => this.list({ ...params, ...(cursor && { cursor }) }));
  }

  get(id: string): Promise<Event> {
    return this.transport.json({ method: 'GET', path: `/v1/events/${encodeURIComponent(id)}` });
  }
}
