::core::compile_error! {
    "groundkit tools are read-only: `mutating` is not a side effect a tool may declare; groundkit serves tools without authentication, so `SideEffect` is sealed to `ReadOnly` in groundkit-core/src/tool.rs, the one place a new side effect would have to be added deliberately"
}
::core::compile_error! {
    "unsupported HTTP method `DELETE`: a tool route is `GET` (no free text; every argument a path segment) or `POST` (arguments in a JSON body)"
}
::core::compile_error! {
    "a tool needs a doc comment: MCP clients show it to the model as the tool's description, and its first sentence is the summary in OpenAPI"
}
async fn delete(ctx: &Ctx, request: Req) -> Result<Resp, Error> {
    ctx.delete(request.id)
}
