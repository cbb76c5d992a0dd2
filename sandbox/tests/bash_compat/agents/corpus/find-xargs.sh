# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should trace the full implementation path)
# workdir: feature-implementation/project
# order: unspecified
find src/commands -name "ls.ts" | grep -v test
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should trace the full implementation path)
# workdir: feature-implementation/project
# order: unspecified
find src -name "*.test.ts" | grep ls
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should count files needing migration)
# workdir: module-migration/project
find src -name "*.js" | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should list all TypeScript/TSX files in project)
# workdir: rename-refactor/project
find src -name "*.ts" -o -name "*.tsx" | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find all files that need security review)
# workdir: security-audit/app
find src -name "*.ts" | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should identify auth-related files for focused review)
# workdir: security-audit/app
find src -type f -name "*auth*" -o -type f -name "*login*" -o -type f -name "*jwt*" | sort
