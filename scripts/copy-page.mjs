#!/usr/bin/env node
// `npm run build`, after tsc: copy the chat page of `durable-agent serve` (plain HTML, CSS and JavaScript modules in
// src/bridge/page/, which tsc does not copy) to dist/bridge/page/, where the built bridge reads it.
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/bridge/page/', import.meta.url));
const target = fileURLToPath(new URL('../dist/bridge/page/', import.meta.url));
rmSync(target, { recursive: true, force: true });
cpSync(source, target, { recursive: true });
