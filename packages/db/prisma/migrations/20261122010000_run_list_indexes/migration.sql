-- Run listing: `q` is a fuzzy search over title, prompt and skill spec (ILIKE and word similarity), served by
-- trigram GIN indexes. pg_trgm is created by the init migration. Every other list filter and sort already has
-- a B-tree or GIN index from the init migration (see docs/runs.md and bench/).

-- CreateIndex
CREATE INDEX "Run_title_idx" ON "Run" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "Run_prompt_idx" ON "Run" USING GIN ("prompt" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "Run_skillSpec_idx" ON "Run" USING GIN ("skillSpec" gin_trgm_ops);
