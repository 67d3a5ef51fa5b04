import { TypedSearchAttributes } from '@temporalio/common';
import { DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS } from '../shared/search-attributes.js';

/** `--search-attribute Name=Type` flags for `temporal server start-dev`. */
export function searchAttributeFlags(keys = DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS): string[] {
  return keys.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]);
}
