/// Greet someone by name.
pub async fn greet(ctx: &Ctx, request: GreetRequest) -> Result<Greeting, Error> {
    ctx.greet(request)
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::TOOLS
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_TOOL_GREET: ::groundkit_core::__private::ToolSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(request: &GreetRequest) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<GreetRequest>();
        ::groundkit_core::__private::assert_return::<Result<Greeting, Error>>();
        ::groundkit_core::__private::path_param(&request.language);
        ::groundkit_core::__private::path_param(&request.name);
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::serde_json::Value,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let request = ::groundkit_core::__private::parse_arguments::<
                GreetRequest,
            >(arguments)?;
            let response = ::groundkit_core::__private::ToolReturn::into_result(
                greet(context, request).await,
            )?;
            ::groundkit_core::__private::to_output(&response)
        })
    }
    ::groundkit_core::__private::ToolSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ToolParts {
        name: "greet",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "Greet someone by name.",
        description: "Greet someone by name.",
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Get,
            path: "/greetings/{language}/{name}",
            params: &["language", "name"],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        input_schema: ::groundkit_core::__private::input_schema::<GreetRequest>,
        output_schema: ::groundkit_core::__private::output_schema::<
            <Result<
                Greeting,
                Error,
            > as ::groundkit_core::__private::ToolReturn>::Response,
        >,
        handler: __groundkit_handler,
    })
};
