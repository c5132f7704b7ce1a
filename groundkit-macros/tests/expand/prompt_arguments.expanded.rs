/// Answer from cited chunks.
pub async fn grounded_answer(
    ctx: &Ctx,
    arguments: AnswerArguments,
) -> Result<Vec<Message>, Error> {
    ctx.answer(arguments).await
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::PROMPTS
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_PROMPT_GROUNDED_ANSWER: ::groundkit_core::__private::PromptSpec = {
    #[allow(dead_code)]
    fn __groundkit_checks(arguments: &AnswerArguments) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<AnswerArguments>();
        ::groundkit_core::__private::assert_prompt_return::<
            Result<Vec<Message>, Error>,
        >();
        let _ = &arguments.collection;
        let _ = &arguments.language;
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::std::vec::Vec<
                ::groundkit_core::__private::Message,
            >,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let arguments = ::groundkit_core::__private::parse_arguments::<
                AnswerArguments,
            >(arguments)?;
            ::groundkit_core::__private::PromptReturn::into_messages(
                grounded_answer(context, arguments).await,
            )
        })
    }
    fn __groundkit_complete_0<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        completion: ::groundkit_core::__private::Completion,
        _call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::std::vec::Vec<
                ::groundkit_core::__private::std::string::String,
            >,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            ::groundkit_core::__private::CompleterReturn::into_values(
                collection_names(context, completion).await,
            )
        })
    }
    fn __groundkit_complete_1<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        completion: ::groundkit_core::__private::Completion,
        _call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::std::vec::Vec<
                ::groundkit_core::__private::std::string::String,
            >,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            ::groundkit_core::__private::CompleterReturn::into_values(
                languages(context, completion).await,
            )
        })
    }
    ::groundkit_core::__private::PromptSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::PromptParts {
        name: "grounded_answer",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "Answer from cited chunks.",
        description: "Answer from cited chunks.",
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Post,
            path: "/prompts/grounded_answer",
            params: &[],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        arguments_schema: ::groundkit_core::__private::input_schema::<AnswerArguments>,
        completers: &[
            ::groundkit_core::__private::Completer {
                argument: "collection",
                handler: __groundkit_complete_0,
            },
            ::groundkit_core::__private::Completer {
                argument: "language",
                handler: __groundkit_complete_1,
            },
        ],
        handler: __groundkit_handler,
    })
};
