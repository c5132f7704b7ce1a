use groundkit_core::{Error, Message, prompt};

pub struct Ctx;

/// Hello.
#[prompt(mutating)]
async fn hello(_: &Ctx) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user("hello")])
}

fn main() {}
