use garde::Validate;
use groundkit_core::{Completion, Error, Message, prompt};
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[garde(length(max = 64))]
    pub language: String,
}

async fn codes(_: &Ctx, _: Completion) -> Result<Vec<String>, Error> {
    Ok(vec![])
}

/// A card.
#[prompt(read_only, complete(langauge = codes))]
async fn card(_: &Ctx, args: Args) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user(args.language)])
}

fn main() {}
