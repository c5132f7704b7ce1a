use groundkit_core::{Completion, Error, Message, prompt};

pub struct Ctx;

async fn codes(_: &Ctx, _: Completion) -> Result<Vec<String>, Error> {
    Ok(vec![])
}

/// Hello.
#[prompt(read_only, complete(language = codes))]
async fn hello(_: &Ctx) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user("hello")])
}

fn main() {}
