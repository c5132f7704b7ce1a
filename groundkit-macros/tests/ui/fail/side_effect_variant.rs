use groundkit_core::SideEffect;

fn main() {
    let _ = SideEffect::Mutating;
}
