import { createConsoleServices } from "../../src/accounts/console-services.js";
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { fixtureWorld, NOTABLE } from "../../src/devnet/fixtures.js";
import type { Provider } from "../../src/domain/providers.js";
import { createScoringRanker, type RankContext } from "../../src/resolution/rank.js";
import { createResolution, type Resolution } from "../../src/resolution/resolution.js";
import {
  CSAM_NAME,
  CSAM_OWNER,
  createScenarioWorld,
  GEO_WORDS,
  SCENARIO_NOW,
  SCENARIO_SETTINGS,
  type ScenarioWorld,
} from "./helpers/scenario-world.js";

const NAMES = [...new Set([...fixtureWorld().domains.map((d) => d.name), CSAM_NAME])];
const COUNTRIES = [null, "DE", "FR"] as const;
const PROVIDER_FILTERS: Array<Provider | undefined> = [undefined, "NAMESPACE_B"];

let world: ScenarioWorld;
const ranker = createScoringRanker({ geoBlockedWords: GEO_WORDS });
let resolution: Resolution;

beforeAll(async () => {
  world = await createScenarioWorld();
  resolution = createResolution({ store: world.store.domainMap, ranker });
});
afterAll(async () => {
  await world?.close();
});

describe("resolve is deep-resolve's first element, and deep-resolve is ordered by score", () => {
  it.each(Object.keys(SCENARIO_SETTINGS))(
    "for every fixture name, country and provider filter (settings: %s)",
    async (s) => {
      let served = 0;
      for (const country of COUNTRIES) {
        const ctx: RankContext = {
          projectSettings: SCENARIO_SETTINGS[s],
          country,
          now: SCENARIO_NOW,
          explain: false,
        };
        for (const name of NAMES) {
          for (const provider of PROVIDER_FILTERS) {
            const filter = { provider };
            const one = await resolution.resolve(name, filter, ctx);
            const all = await resolution.deepResolve(name, filter, ctx);
            expect(one?.domain.id ?? null, `${name} ${provider} ${country}`).toBe(all[0]?.domain.id ?? null);
            expect(one?.score ?? null).toBe(all[0]?.score ?? null);
            // The order never contradicts the scores a partner sees (collision rules raise the scores).
            for (let i = 1; i < all.length; i++) expect(all[i].score).toBeLessThanOrEqual(all[i - 1].score);
            // And the ranker agrees with itself on the raw candidates.
            const candidates = await world.store.domainMap.findDomainsByName([name], filter);
            expect(ranker.rank(candidates, ctx)[0]?.domain.id ?? null).toBe(one?.domain.id ?? null);
            if (one) served++;
          }
        }
      }
      expect(served).toBeGreaterThan(0);
    },
  );
});

describe("through the REST API", () => {
  let app: FastifyInstance;
  let key: string;
  let projectId: number;

  beforeAll(async () => {
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store: world.store,
      ranker,
      pepper: randomBytes(16).toString("hex"),
      clock: () => SCENARIO_NOW,
    };
    // The internal plan: these tests send thousands of requests, well past a free plan's rate.
    const project = await world.store.projects.createProject({ name: "scoring-api", plan: "internal" });
    projectId = project.id;
    key = (await createApiKey(world.store, ctx.pepper, project.id, "scoring")).key;
    app = await buildApp(ctx, {
      services: createConsoleServices(ctx),
      closeServices: true,
      countryHeader: "CF-IPCountry",
      keyCacheTtlMs: 0,
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function get(path: string, country?: string) {
    const headers: Record<string, string> = { "api-key": key };
    if (country) headers["cf-ipcountry"] = country;
    const res = await app.inject({ method: "GET", url: `/svc/api/v1/${path}`, headers });
    return {
      status: res.statusCode,
      body: res.json() as { result: boolean; data: Array<Record<string, unknown>> & Record<string, unknown> },
    };
  }

  const q = encodeURIComponent;

  it.each(Object.keys(SCENARIO_SETTINGS))(
    "resolve equals deep-resolve[0] for every fixture name (settings: %s)",
    async (s) => {
      await world.store.projects.updateProjectSettings(projectId, SCENARIO_SETTINGS[s]);
      for (const country of ["DE", undefined]) {
        for (const name of NAMES) {
          const one = await get(`resolve?domain=${q(name)}`, country);
          const all = await get(`deep-resolve?domain=${q(name)}`, country);
          expect(all.status).toBe(200);
          if (all.body.data.length === 0) {
            expect(one.status, `${name} ${country}`).toBe(404);
          } else {
            expect(one.status, `${name} ${country}`).toBe(200);
            expect(one.body.data).toEqual(all.body.data[0]);
          }
        }
      }
    },
  );

  it("never serves the CSAM-failing name on any endpoint", async () => {
    await world.store.projects.updateProjectSettings(projectId, SCENARIO_SETTINGS.includeExpired);
    expect((await get(`resolve?domain=${q(CSAM_NAME)}`)).status).toBe(404);
    expect((await get(`deep-resolve?domain=${q(CSAM_NAME)}`)).body.data).toEqual([]);
    expect((await get(`reverse-resolve?walletAddress=${CSAM_OWNER}`)).body.data).toEqual([]);
  });

  it("blocks a geo word for DE callers only", async () => {
    await world.store.projects.updateProjectSettings(projectId, {});
    expect((await get("resolve?domain=moon.wallet", "DE")).status).toBe(404);
    expect((await get("resolve?domain=moon.wallet", "FR")).status).toBe(200);
    expect((await get("resolve?domain=moon.wallet")).status).toBe(200);
  });

  it("adds scoreDetails with ?explain=true and changes nothing else", async () => {
    await world.store.projects.updateProjectSettings(projectId, SCENARIO_SETTINGS.domainException);
    const plain = await get(`deep-resolve?domain=${q(NOTABLE.crossProvider)}`);
    const explained = await get(`deep-resolve?domain=${q(NOTABLE.crossProvider)}&explain=true`);
    expect(explained.body.data.length).toBe(plain.body.data.length);
    explained.body.data.forEach((rec, i) => {
      const { scoreDetails, ...rest } = rec as {
        scoreDetails: Array<{ rule: string; effect: number; reason: string }>;
      };
      expect(rest).toEqual(plain.body.data[i]);
      expect(scoreDetails.reduce((s, d) => s + d.effect, 0)).toBe(rec.score);
    });
    const first = explained.body.data[0] as { provider: string; scoreDetails: Array<{ rule: string }> };
    expect(first.provider).toBe("NAMESPACE_B");
    expect(first.scoreDetails.map((d) => d.rule)).toContain("exception");
  });

  it("shows the lookalike as spam with its tags", async () => {
    await world.store.projects.updateProjectSettings(projectId, {});
    const res = await get(`resolve?domain=${q(NOTABLE.confusable)}`);
    expect(res.status).toBe(200);
    const data = res.body.data as unknown as { spam: boolean; score: number; info: { tags: string[] } };
    expect(data.spam).toBe(true);
    expect(data.score).toBeLessThanOrEqual(10);
    expect(data.info.tags).toContain(`confusable:${NOTABLE.imitated}`);
  });
});
