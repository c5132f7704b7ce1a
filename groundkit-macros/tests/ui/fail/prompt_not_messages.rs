use groundkit_core::{Error, prompt};

pub struct Ctx;

/// Hello.
#[prompt(read_only)]
async fn hello(_: &Ctx) -> Result<String, Error> {
    Ok("hello".into())
}

fn main() {}
