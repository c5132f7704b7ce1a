/// Count the words of a text,
/// split on whitespace. Punctuation counts as part of a word.
pub async fn text_stats(ctx: &Ctx, request: StatsRequest) -> Result<Stats, Error> {
    ctx.stats(&request.text)
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::TOOLS
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_TOOL_TEXT_STATS: ::groundkit_core::__private::ToolSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(request: &StatsRequest) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<StatsRequest>();
        ::groundkit_core::__private::assert_return::<Result<Stats, Error>>();
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
                StatsRequest,
            >(arguments)?;
            let response = ::groundkit_core::__private::ToolReturn::into_result(
                text_stats(context, request).await,
            )?;
            ::groundkit_core::__private::to_output(&response)
        })
    }
    ::groundkit_core::__private::ToolSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ToolParts {
        name: "text_stats",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "Count the words of a text, split on whitespace.",
        description: "Count the words of a text,\nsplit on whitespace. Punctuation counts as part of a word.",
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Post,
            path: "/text/stats",
            params: &[],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        input_schema: ::groundkit_core::__private::input_schema::<StatsRequest>,
        output_schema: ::groundkit_core::__private::output_schema::<
            <Result<Stats, Error> as ::groundkit_core::__private::ToolReturn>::Response,
        >,
        handler: __groundkit_handler,
    })
};
