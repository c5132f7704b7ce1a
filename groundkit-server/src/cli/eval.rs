//! `grk eval`: retrieval quality of a collection (local, or held by the cluster) on BEIR-format
//! queries and relevance judgements.

use groundkit_core::Error;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{self as retrieval, CollectionCache};

use super::args::{Cli, EvalArgs};
use super::output::{self, emit};

pub(super) fn eval(
    cli: &Cli,
    args: &EvalArgs,
    embedder: Option<&dyn Embedder>,
) -> Result<(), Error> {
    let queries = retrieval::eval::read_queries(&args.queries)?;
    let qrels = retrieval::eval::read_qrels(&args.qrels)?;
    if let Some(cluster) = cli.cluster.backend(&cli.base_dir, &cli.index_dir)?
        && cluster.holds(&args.collection)?
    {
        let report = retrieval::evaluate_backend(
            &*cluster,
            &args.collection,
            &queries,
            &qrels,
            args.mode.mode(),
            args.fusion.method(),
            embedder,
        )?;
        return emit(args.json, &report, output::print_eval);
    }
    let cache = CollectionCache::new(cli.index_dir.clone(), cli.base_dir.clone(), 1);
    let open = cache.acquire(&args.collection)?;
    let how = retrieval::eval::Ranking {
        mode: args.mode.mode(),
        embedder,
        fusion: retrieval::Fusion::of(args.fusion.method()),
    };
    if how.mode != retrieval::SearchMode::Lexical {
        retrieval::check_dense(&open, how.embedder)?;
    }
    let report = retrieval::eval::evaluate(&open, &queries, &qrels, &how)?;
    emit(args.json, &report, output::print_eval)
}
