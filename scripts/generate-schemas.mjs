#!/usr/bin/env node
// Writes schemas/*.schema.json: a JSON Schema (draft-07) for every public input and result of the conversation
// workflow, generated from the TypeScript types in src/workflows/definitions.ts, so the types stay the one source and a
// backend in any language can validate what it sends. JSDoc tags on the types (`@maxLength`, `@pattern`,
// `@asType integer`, `@minimum`, `@format`) become the schemas' validation rules.
//
//   npm run schemas                               regenerate schemas/
//   node scripts/generate-schemas.mjs <directory>   write them elsewhere (test/schemas.test.ts compares the two)
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import {
  BaseType,
  createFormatter,
  createParser,
  createProgram,
  DEFAULT_CONFIG,
  SchemaGenerator,
  StringTemplateLiteralNodeParser,
  StringType,
} from 'ts-json-schema-generator';
import ts from 'typescript';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** Each schema file and the exported type of src/workflows/definitions.ts it describes. docs/protocol.md lists them. */
export const SCHEMAS = {
  'conversation-input.schema.json': 'ConversationInput',
  'conversation-settings.schema.json': 'ConversationSettings',
  'incoming-message.schema.json': 'IncomingMessage',
  'turn-result.schema.json': 'TurnResult',
  'interrupt-request.schema.json': 'InterruptRequest',
  'end-request.schema.json': 'EndRequest',
  'conversation-status.schema.json': 'ConversationStatus',
  'transcript-request.schema.json': 'TranscriptRequest',
  'transcript-page.schema.json': 'TranscriptPage',
  'conversation-outcome.schema.json': 'ConversationOutcome',
  'approve-request.schema.json': 'ApproveRequest',
  'deny-request.schema.json': 'DenyRequest',
  'approval-decision.schema.json': 'ApprovalDecision',
  'input-answer.schema.json': 'InputAnswer',
};

/** A string type that only a pattern can describe, such as `error:${string}`. */
class PatternStringType extends BaseType {
  constructor(pattern) {
    super();
    this.pattern = pattern;
  }

  getId() {
    return `pattern-string:${this.pattern}`;
  }
}

/**
 * The generator turns a template literal type with a `${string}` part into a bare string, which would let `StopReason`
 * accept any string; this gives it the pattern the type means (`error:${string}` → `^error:.*$`). Template literals of
 * literal unions (`budget:${BudgetLimit}`) still expand to their values.
 */
class TemplateLiteralPatternParser {
  constructor(childNodeParser) {
    this.builtIn = new StringTemplateLiteralNodeParser(childNodeParser);
  }

  supportsNode(node) {
    return node.kind === ts.SyntaxKind.TemplateLiteralType;
  }

  createType(node, context) {
    const type = this.builtIn.createType(node, context);
    if (!(type instanceof StringType)) return type;
    const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    let pattern = escape(node.head.text);
    for (const span of node.templateSpans) {
      if (span.type.kind !== ts.SyntaxKind.StringKeyword) return type;
      pattern += `.*${escape(span.literal.text)}`;
    }
    return new PatternStringType(`^${pattern}$`);
  }
}

const patternStringFormatter = {
  supportsType: (type) => type instanceof PatternStringType,
  getDefinition: (type) => ({ type: 'string', pattern: type.pattern }),
  getChildren: () => [],
};

/** Numeric constants exported by src/, by name: `{@link DEFAULT_MAX_ROUNDS}` in a description becomes its value. */
function numericConstants(program) {
  const evaluate = (node) => {
    if (ts.isNumericLiteral(node)) return Number(node.text);
    if (ts.isParenthesizedExpression(node)) return evaluate(node.expression);
    if (!ts.isBinaryExpression(node)) return undefined;
    const [left, right] = [evaluate(node.left), evaluate(node.right)];
    if (left === undefined || right === undefined) return undefined;
    if (node.operatorToken.kind === ts.SyntaxKind.AsteriskToken) return left * right;
    if (node.operatorToken.kind === ts.SyntaxKind.PlusToken) return left + right;
    return undefined;
  };
  const constants = new Map();
  for (const sourceFile of program.getSourceFiles()) {
    if (!sourceFile.fileName.startsWith(path.join(root, 'src') + path.sep)) continue;
    for (const statement of sourceFile.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const declaration of statement.declarationList.declarations) {
        const value = declaration.initializer && evaluate(declaration.initializer);
        if (ts.isIdentifier(declaration.name) && value !== undefined) constants.set(declaration.name.text, value);
      }
    }
  }
  return constants;
}

/** Descriptions come from JSDoc: inline `{@link NAME}` tags become the constant's value, or the name in backticks. */
function resolveLinks(schema, constants) {
  if (Array.isArray(schema)) return schema.map((item) => resolveLinks(item, constants));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => {
      if (key !== 'description' || typeof value !== 'string') return [key, resolveLinks(value, constants)];
      const text = value.replace(/\s*\{@link\s+([^\s}]+)\s*\}\s*/g, (_tag, name, offset, whole) => {
        const shown = constants.has(name) ? constants.get(name).toLocaleString('en-US') : `\`${name}\``;
        const end = offset + _tag.length;
        return ` ${shown}${end < whole.length && !/[.,;:)]/.test(whole[end]) ? ' ' : ''}`;
      });
      return [key, text];
    }),
  );
}

/** The schemas as the files hold them: file name → formatted JSON text. */
export async function generateSchemas() {
  const config = {
    ...DEFAULT_CONFIG,
    path: path.join(root, 'src/workflows/definitions.ts'),
    tsconfig: path.join(root, 'tsconfig.build.json'),
    type: '*',
    expose: 'export',
    topRef: true,
    jsDoc: 'extended',
    sortProps: false,
    additionalProperties: false,
  };
  const program = createProgram(config);
  const parser = createParser(program, config, (chain) => chain.addNodeParser(new TemplateLiteralPatternParser(chain)));
  const formatter = createFormatter(config, (chain) => chain.addTypeFormatter(patternStringFormatter));
  const generator = new SchemaGenerator(program, parser, formatter, config);
  const constants = numericConstants(program);
  const prettierOptions = { ...(await prettier.resolveConfig(path.join(root, 'package.json'))), parser: 'json' };
  const files = new Map();
  for (const [file, type] of Object.entries(SCHEMAS)) {
    const { $schema, ...schema } = resolveLinks(generator.createSchema(type), constants);
    const text = JSON.stringify({
      $schema,
      title: type,
      $comment: 'Generated from the TypeScript types by `npm run schemas` (scripts/generate-schemas.mjs). Do not edit.',
      ...schema,
    });
    files.set(file, await prettier.format(text, prettierOptions));
  }
  return files;
}

/** Replace the schema files of `directory` with freshly generated ones. */
export async function writeSchemas(directory) {
  const files = await generateSchemas();
  mkdirSync(directory, { recursive: true });
  for (const file of readdirSync(directory)) {
    if (file.endsWith('.schema.json') && !files.has(file)) rmSync(path.join(directory, file));
  }
  for (const [file, text] of files) writeFileSync(path.join(directory, file), text);
  return [...files.keys()];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const directory = path.resolve(process.argv[2] ?? path.join(root, 'schemas'));
  const written = await writeSchemas(directory);
  console.log(`${written.length} schemas written to ${path.relative(process.cwd(), directory) || '.'}`);
}
