import type { RankedDomain } from "../../../resolution/rank.js";
import { type ShapeMode, shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";

/** The content type Fastify gives a serialized JSON body; a pre-serialized body sets it itself. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** Different rankings of one domain kept at once (projects with other priorities, the age rule). */
const VARIANTS_PER_DOMAIN = 4;

const OPEN = '{"result":true,"data":';
const OPEN_BYTES = Buffer.byteLength(OPEN);
const CLOSE = "}";
const LIST_OPEN = Buffer.from('{"result":true,"data":[');
const LIST_CLOSE = Buffer.from("]}");
const COMMA = Buffer.from(",");
const EMPTY_LIST = Buffer.from('{"result":true,"data":[]}');

interface Variant {
  score: number;
  spam: boolean;
  tags: readonly string[];
  /** `{"result":true,"data":<record>}` in UTF-8; the record is the bytes between OPEN and CLOSE. */
  body: Buffer;
}

function sameTags(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Answers of resolve and deep-resolve (without explain) as the bytes to send. */
export interface ForwardAnswers {
  /** `{"result":true,"data":<record>}`. */
  resolveBody(ranked: RankedDomain): Buffer;
  /** `{"result":true,"data":[<record>,…]}`. */
  deepResolveBody(ranked: readonly RankedDomain[]): Buffer;
}

/**
 * Forward wire records as UTF-8 JSON, memoized per stored domain object.
 *
 * Exact by construction: the bytes are a function of the domain's fields and of the ranking's
 * (score, spam, tags), and all of these are part of the key. The ranking itself still runs on
 * every request (it depends on the project, the caller's country and the time); only shaping,
 * serialization and encoding (~10 µs a request) are saved. Only frozen domains are memoized: the
 * SQLite store returns frozen objects that it shares until the next commit and replaces after it,
 * so a changed domain is a new key; other stores return fresh objects per call, which are
 * serialized every time. Entries go with their domain objects (WeakMap): the store's cache bounds
 * them. A Buffer body also spares Fastify measuring and encoding a string on every answer.
 *
 * `serialize` must be the response serializer of the record schema, so that the bytes are those
 * Fastify would have written for the same record (record-json.test.ts checks it).
 *
 * @example
 * const answers = createForwardAnswers(serializeRecord);
 * reply.header("content-type", JSON_CONTENT_TYPE).send(answers.resolveBody(best));
 */
export function createForwardAnswers(
  serialize: (record: WireRecord) => string,
  onLookup?: CacheLookup,
): ForwardAnswers {
  return createAnswers(serialize, "forward", onLookup);
}

/** Told of every lookup of the memo: found (bytes reused) or not (serialized now). For metrics. */
export type CacheLookup = (found: boolean) => void;

/** Answers of reverse-resolve as the bytes to send. */
export interface ReverseAnswers {
  /** `{"result":true,"data":[<reverse record>,…]}`. */
  listBody(ranked: readonly RankedDomain[]): Buffer;
}

/**
 * Reverse wire records (no smartContractAddress), memoized as createForwardAnswers does, under the
 * same exactness argument. `serialize` must be the response serializer of the reverse record schema.
 */
export function createReverseAnswers(
  serialize: (record: WireRecord) => string,
  onLookup?: CacheLookup,
): ReverseAnswers {
  return { listBody: createAnswers(serialize, "reverse", onLookup).deepResolveBody };
}

function createAnswers(
  serialize: (record: WireRecord) => string,
  mode: ShapeMode,
  onLookup: CacheLookup = () => {},
): ForwardAnswers {
  const memo = new WeakMap<object, Variant[]>();

  // No closure is made per call: under tsx (the bench) each named one costs a defineProperty.
  function fresh(ranked: RankedDomain): Buffer {
    return Buffer.from(OPEN + serialize(shapeRecord(ranked, mode, false)) + CLOSE);
  }

  function bodyOf(ranked: RankedDomain): Buffer {
    const d = ranked.domain;
    if (!Object.isFrozen(d)) {
      onLookup(false);
      return fresh(ranked);
    }
    let variants = memo.get(d);
    if (variants !== undefined) {
      for (const v of variants) {
        if (v.score === ranked.score && v.spam === ranked.spam && sameTags(v.tags, ranked.tags)) {
          onLookup(true);
          return v.body;
        }
      }
    } else {
      variants = [];
      memo.set(d, variants);
    }
    onLookup(false);
    const body = fresh(ranked);
    if (variants.length >= VARIANTS_PER_DOMAIN) variants.shift();
    // A ranker may hand out a tags array it changes later: keep a copy unless it is frozen.
    const tags = Object.isFrozen(ranked.tags) ? ranked.tags : [...ranked.tags];
    variants.push({ score: ranked.score, spam: ranked.spam, tags, body });
    return body;
  }

  return {
    resolveBody: bodyOf,
    deepResolveBody(ranked) {
      if (ranked.length === 0) return EMPTY_LIST;
      const parts: Buffer[] = [LIST_OPEN];
      for (let i = 0; i < ranked.length; i++) {
        const body = bodyOf(ranked[i]);
        if (i > 0) parts.push(COMMA);
        parts.push(body.subarray(OPEN_BYTES, body.length - CLOSE.length));
      }
      parts.push(LIST_CLOSE);
      return Buffer.concat(parts);
    },
  };
}
